"""Code probes (as FoundationDB's): every rare condition of the model, named where it happens.

An actor calls ``port.probe(name)`` on the line where the condition occurs; the simulator counts
the hits of each run, and ``handoff explore`` reports how many seeds reached each probe and which
were never reached. A probe that no seed of the default world hits marks an edge the swarm does
not explore. Names are declared here once: an unknown name is an error.
"""

from __future__ import annotations

PROBES: dict[str, str] = {
    # -- the delivery core (actors/delivery/table.py) ----------------------------------------------
    "delivery.ack-one-under-timeout": "a try's answer arrived 119,999 ms after its send, one ms "
                                      "before its 120 s answer timeout",
    "delivery.ack-at-timeout-answer-first": "a try's answer arrived in the very instant of its "
                                            "120 s answer timeout, before the timer fired",
    "delivery.ack-at-timeout-after-timer": "a try's answer arrived in the very instant of its "
                                           "120 s answer timeout, after the timer fired (a late "
                                           "answer that still proves the hand-off)",
    "delivery.ack-one-over-timeout": "a try's answer arrived 120,001 ms after its send, one ms "
                                     "past its answer timeout",
    "delivery.delivered-on-last-transport-try": "a completion refused on three transport tries "
                                                "went through on the fourth, the last one "
                                                "(one under the tries' budget)",
    "delivery.tries-due-in-one-instant": "two runs' delivery tries or attempts were due in "
                                         "one instant (their timers' order is the scheduler's)",
    "delivery.not-required-skip": "a run spawned with expectsCompletionMessage false is skipped",
    "delivery.child-ended-twice": "a child's end arrives for a run restore already picked up",
    "delivery.child-ended-after-resolution": "a child's end arrives for an already resolved run",
    "delivery.announce-skip": "a child replied exactly ANNOUNCE_SKIP: nothing is announced",
    "delivery.descendants-pending": "a run's announcement waits for its pending descendants",
    "delivery.cleanup-after-restart": "a restarted actor finishes a resolved run's cleanup",
    "delivery.permanent-error": "a send is rejected with a permanent error",
    "delivery.wrapped-permanent-error": "a permanent error arrives wrapped in another error",
    "delivery.sent-before-error": "a send fails after part of it reached the platform",
    "delivery.transient-retries-exhausted": "all four transport tries of an attempt failed",
    "delivery.unclassified-error": "a send fails with an error of no known class (backoff)",
    "delivery.ack-timeout": "a send got no answer within the announce timeout",
    "delivery.stale-rejection": "a rejection arrives for a try that is no longer in flight",
    "delivery.duplicate-ack": "the requester acknowledged a key it had already recorded",
    "delivery.late-ack": "an acknowledgement arrives after its try timed out",
    "delivery.stale-ack": "an acknowledgement arrives for a run no longer in flight",
    "delivery.backoff-capped": "the registry backoff reached its 300 s cap",
    "delivery.backoff-past-expiry": "a registry backoff runs its whole length past the expiry: "
                                    "the resume it ends in gives up",
    "delivery.expiry-at-decision": "an attempt ended at or past its expiry (its transport tries "
                                   "ran past it): the registry gave up at once, no backoff",
    "delivery.expiry": "a completion expired 30 minutes after its run ended",
    "delivery.expiry-overdue": "an attempt came due after its expiry had passed (a restarted "
                               "process restoring it, a descendants' recheck): given up at once",
    "delivery.suspended": "delivery gave up on an ok child (payload kept for a redrive)",
    "delivery.failed": "delivery gave up on a child that did not end ok",
    "delivery.restart-during-backoff": "a restarted actor finds a backoff still running",
    "delivery.restart-after-backoff-due": "a restarted actor finds a backoff already due",
    "delivery.restart-between-send-and-record": "a restarted actor finds an attempt started "
                                                "but never resolved (it sends again)",
    "delivery.restart-before-first-attempt": "a restarted actor finds an ended run it never "
                                             "tried to deliver",
    # -- the gateway (actors/gateway/core.py, actors/gateway/shell.py) -----------------------------
    "gateway.chunk-failed-after-sent": "a chunk failed or aborted after earlier chunks reached "
                                       "the channel (an incomplete send)",
    "gateway.first-chunk-failed": "a channel refused the first chunk of a send",
    "batch.sections-ordered-by-session-key": "a wake named two members spawned and ended in "
                                             "one instant: their sections' order is the session "
                                             "keys' (the stable order's last tie-break)",
    "gateway.chunk-break-at-limit": "a chunk was cut after a line break that was the channel "
                                    "limit's last character",
    "gateway.chunk-break-one-under-limit": "a chunk was cut after a line break one character "
                                           "under the channel's limit",
    "gateway.chunk-break-one-over-limit": "a line break fell one character past the channel's "
                                          "limit: the chunk was cut at the limit, before it",
    "gateway.incomplete-repeat-refused": "a repeat of an incomplete chunked send was refused",
    "gateway.ack-slow-past-timeout": "a session's ack came back after the announce timeout",
    "gateway.ack-lost": "a session's acknowledgement was lost on its way back",
    # -- the delivery shell (actors/delivery/shell.py): where the process died ---------------------
    "delivery.crash-before-send": "the delivery process died just before handing a send over",
    "delivery.crash-between-send-and-record": "the delivery process died after the ack, before "
                                              "recording delivered",
    "delivery.crash-in-ack-wait": "the delivery process died while a send awaited its ack",
    "delivery.crash-in-try-wait": "the delivery process died between two transport tries",
    "delivery.crash-in-backoff": "the delivery process died during a registry backoff",
    # -- rendering the announce block (actors/delivery/table.py) ----------------------------------
    "announce.truncated": "a result was cut at the 160,000-character cap and a marker written",
    "announce.one-under-shared-cap": "a completion's announce block was 159,999 characters: one "
    "under the shared cap, whole",
    "announce.at-shared-cap": "a completion's announce block was exactly 160,000 characters: at "
    "the shared cap, whole",
    "batch.floor-heads-one-under-cap": "a wake's findings were summarized, the shown children "
    "at floor-sized heads one character under the cap",
    "batch.floor-heads-at-cap": "a wake's findings were summarized, the shown children at "
    "floor-sized heads exactly at the cap",
    "batch.floor-heads-one-over-cap": "a wake's findings left out a child whose floor-sized head "
    "would have passed the cap by one character",
    "announce.one-over-shared-cap": "a completion's announce block would have been 160,001 "
    "characters whole: one over the shared cap, so its result was cut",
    "announce.no-output": "a required result was delivered as (no output)",
    "announce.escaped": "a result carried < or & that had to be escaped",
    "announce.forged-framing": "a result carried text that looks like block framing or a marker",
    # -- the child's run (actors/child/shell.py) --------------------------------------------------
    "child.attempt-retried": "a model attempt failed and was retried",
    "child.attempt-fallback": "the result came from streamed text, no message had content",
    "child.timeout": "a child outlived its timeout and was disposed of",
    "child.run-timeout": "a run still going at its spawn's runTimeoutSeconds deadline ended "
                         "timeout there (reference §c18)",
    "child.run-timeout-floored": "a run's runTimeoutSeconds had a fraction of a second, which the "
                                 "deadline floored away",
    "child.run-timeout-children-outlive": "a run timed out while children it spawned still ran: "
                                          "they were not cancelled",
    "child.run-timeout-zero": "a spawn asked runTimeoutSeconds 0: no deadline",
    "child.timeout-mid-stream": "the timeout cut an attempt's stream part-way",
    "child.timeout-before-retry": "an attempt failed, then the timeout came before its retry "
                                  "streamed",
    "child.stream-error": "a child's stream broke and its turn failed",
    "child.stream-error-after-retry": "a stream broke in a step after a retried attempt",
    "child.aborted": "the requester aborted a running child",
    "child.restart-interrupted": "a Gateway restart interrupted a streaming run (§c18)",
    "child.restart-held": "a run started while the Gateway was down and waited for it",
    "child.restart-context-lost": "recovery found an interrupted run's execution context "
                                  "lost: it ends error, never resumed",
    "child.restart-resumed-required": "recovery resumed an interrupted run whose completion "
                                      "is required: its requester is owed the notice",
    "child.restart-resumed-silent": "recovery resumed an interrupted run whose completion is "
                                    "not required: no notice",
    "requester.restart-notice": "a requester read the resumed notice of a restarted child",
    "requester.restart-notice-failed": "a resumed notice failed: kept as a debt",
    "requester.restart-notice-retried": "a failed resumed notice was tried again (no second "
                                        "recovery turn)",
    "requester.restart-notice-with-completion": "a child's completion reached its requester "
                                                "while its notice was owed: the notice first",
    "child.cancelled-mid-stream": "an abort cut an attempt's stream part-way",
    "child.token-limit": "a child's turn ended at its token limit",
    "child.token-limit-empty-message": "a token-limit cut-off left an empty terminal message",
    "child.no-reply": "a child answered exactly NO_REPLY",
    "child.no-reply-near-miss": "a child's answer looks like NO_REPLY but is not exactly it",
    "child.no-output": "a child ended ok with no text at all",
    "child.error-text-dropped": "a failed child streamed text that is not replayed (DEL-14)",
    "child.usage-missing": "a child settled before its usage was recorded",
    "child.result-frozen-capped": "a child's result over 102,400 bytes of UTF-8 was frozen as a "
                                  "prefix plus the truncation notice (reference §c14)",
    "child.result-frozen-mid-character": "the frozen cap's byte limit fell inside a multibyte "
                                         "character: the prefix stopped before it",
    "child.result-one-under-frozen-cap": "a child's result was 102,399 bytes of UTF-8: one "
                                         "under the frozen cap, kept whole",
    "child.result-at-frozen-cap": "a child's result was exactly 102,400 bytes of UTF-8: at the "
                                  "frozen cap, kept whole",
    "child.result-one-over-frozen-cap": "a child's result was 102,401 bytes of UTF-8: one over "
                                        "the frozen cap, capped",
    # -- sessions_history pages at their limits (actors/history/sessions.py) ---------------------
    "requester.history-field-one-under-limit": "a history page's text field was 3,999 "
                                               "UTF-16 units: kept whole",
    "requester.history-field-at-limit": "a history page's text field was exactly 4,000 UTF-16 "
                                        "units: kept whole",
    "requester.history-field-one-over-limit": "a history page's text field was 4,001 UTF-16 "
                                              "units: cut",
    "requester.history-rows-dropped-several-left": "the 80 KiB cap dropped a page's oldest "
                                                   "rows and left more than one",
    "requester.history-paged-more": "a history read given an offset had more rows below its "
                                    "page (hasMore, nextOffset)",
    "requester.history-paged-floor": "a history read given an offset returned one row at the top "
                                     "of its window: nextOffset's floor offset + 1 binds",
    # -- the requester session (actors/requester/shell.py) ----------------------------------------
    "requester.session-rerun": "a child session is spawned again (a new run id)",
    "requester.duplicate-completion": "a completion arrived whose key the session had recorded",
    "requester.refused-person": "a person without the session's permission tried a session-"
                                "control action; it was refused (DEL-17)",
    "requester.refused-report": "a turn started by a completion report tried a session-control "
                                "action; the report carries no permission, so it was refused",
    # -- route resolution (actors/gateway/routing.py, called by actors/delivery/shell.py) ----------
    "route.bound": "a bound conversation/thread picked the completion's target",
    "route.hook": "the subagent_delivery_target hook picked the completion's target",
    "route.hook-ignored": "the hook returned only an internal channel (webchat) or no chat: "
                          "the origin stays",
    "route.stored-fallback": "no origin was captured: the stored route is the fallback",
    "route.origin-filled-from-stored": "a compatible stored route filled the origin's missing "
                                       "chat or thread",
    "route.webchat-ignores-stored": "a webchat origin did not inherit the session's earlier "
                                    "external target",
    "route.thread-not-inherited": "an override picked another chat: the old thread was dropped",
    "route.thread-inherited": "an override in the same chat kept the old thread",
    "route.internal": "a top-level completion had no channel and chat: internal injection only "
                      "(deliver=false)",
    # -- closed turns, callbacks, warnings, lost answers, retention (docs/recovery.md) -------
    "delivery.closed-turn-rejected": "transcript persistence refused a completion of a closed "
                                     "turn (a permanent failure, DEL-7)",
    "gateway.callback-failed": "the receive callback failed after a confirmed hand-off",
    "delivery.callback-failed-after-handoff": "a confirmed hand-off whose receive callback "
                                              "failed is recorded delivered (DEL-9)",
    "delivery.warning-kept-error": "a blocked-completion warning kept an earlier concrete error "
                                   "over an unanswered try (DEL-9)",
    "child.answer-lost": "a child's captured reply was lost; its transcript holds the answer",
    "gateway.mirror-after-queued-work": "a transcript mirror waited behind work queued on its "
                                        "requester session (DEL-8)",
    "gateway.mirror-failed": "a transcript mirror failed; its delivery stays delivered (DEL-8)",
    "requester.resend-after-compaction": "a completion input resent after the session compacted "
                                         "was still known by its turn identity (DEL-7)",
    "delivery.recovery-attempted": "lost-answer recovery read a silent run's transcript (DEL-2)",
    "delivery.answer-recovered": "lost-answer recovery found the answer and handed it over",
    "delivery.recovery-send-failed": "a recovered answer's hand-off failed; recovery tries again",
    "delivery.recovery-bound-reached": "lost-answer recovery stopped at its attempt bound (DEL-2)",
    "delivery.recovered-on-last-attempt": "lost-answer recovery's hand-off was refused on two "
                                          "attempts and took on the third, the last one (one "
                                          "under its bound, DEL-2)",
    "delivery.payload-reloaded": "lost-answer recovery loaded a resolved run's full record "
                                  "from the store to hand its answer over (DEL-16)",
    # -- receipts, recovery claims and checkpoint reconciliation (DEL-12, DEL-13, DEL-15) ----
    "requester.receipt-superseded": "a receipt with a newer end time replaced a run's reply",
    "requester.receipt-out-of-order": "an older receipt arrived after a newer one (dropped)",
    "child.corrected": "a child corrected its result after its end (a newer receipt)",
    "delivery.corrected-before-send": "a correction arrived before its run's first send",
    "delivery.reopened-in-flight": "a correction arrived while an older receipt was in flight "
                                   "(the next delivery generation starts)",
    "delivery.reopened-after-delivery": "a correction arrived after its run was delivered",
    "delivery.restart-finds-newer-receipt": "a restarted actor finds a delivered run with a "
                                            "newer, undelivered receipt",
    "delivery.restart-reopens-for-newer-receipt": "a restarted actor finds an attempted claim "
                                                  "on an older receipt, not at the requester, "
                                                  "and a newer one: it opens the next "
                                                  "generation",
    "delivery.older-generation-ack": "an ack of an older delivery generation arrived",
    "delivery.restart-evidence-saved": "a restarted actor finds evidence saved but the claim "
                                       "open: it clears the claim, sends nothing",
    "delivery.restart-checkpoint-found": "a restarted actor finds the requester's checkpoint of "
                                         "an attempted receipt: delivered, not sent again",
    "delivery.restart-claim-consumed": "a restarted actor finds a consumed claim (a restart "
                                       "died reconciling it)",
    "delivery.restart-checkpoint-missing": "a restarted actor finds an attempted claim and no "
                                           "checkpoint: it replays the claim's key",
    "delivery.claim-abandoned": "delivery gave up with its recovery claim still active",
    "delivery.crash-before-claim-attempted": "the delivery process died before marking a claim "
                                             "attempted (nothing handed over yet)",
    "delivery.crash-before-save-evidence": "the delivery process died after a confirmed "
                                           "hand-off, before saving its evidence",
    "delivery.crash-between-evidence-and-claim": "the delivery process died after saving "
                                                 "evidence, before clearing the claim",
    # -- nesting (docs/nesting.md) ------------------------------------------------------------
    "requester.spawn-refused-depth": "a session at maxSpawnDepth tried to spawn (refused)",
    "requester.spawn-refused-children": "a session at maxChildrenPerAgent active children "
                                        "tried to spawn (refused)",
    "requester.spawn-refused-not-running": "a nested session whose run is not running tried "
                                           "to spawn (refused)",
    "requester.spawn-takes-last-child-slot": "a session spawned its last child "
                                             "maxChildrenPerAgent allows (one under the limit)",
    "requester.spawn-at-deepest-depth": "a session one under maxSpawnDepth spawned: the "
                                        "deepest spawn the limit allows",
    "requester.lane-queued": "a spawned run waits for a slot of the maxConcurrent lane",
    "requester.abort-cascaded": "a killed run's unfinished child was killed with it, its "
                                "delivery suppressed too (reference §c18)",
    "requester.kill-ended-run": "a kill named a child whose latest run had already ended: "
                                "nothing killed, nothing changed (reference §c18)",
    "requester.steer-restart": "a running child was steered: its run aborted unannounced and a "
                               "replacement run started in its session (reference §c18)",
    "requester.steer-queued-run": "a steered run still waited in line (lane or session)",
    "requester.steer-ended-run": "a steer named a child whose latest run had ended: nothing "
                                 "steered",
    "requester.kill-ended-completion-in-flight": "a kill named an ended child whose required "
                                                 "completion was still in flight",
    "requester.session-gone": "a completion reached a nested session deleted while it was on "
                              "its way (refused; the next attempt falls back)",
    "delivery.findings": "a run's announcement carries its direct children's findings",
    "delivery.findings-stale-row": "a child row whose session now belongs to another run was "
                                   "left out of the findings",
    "delivery.findings-older-row": "an older row of a child session was superseded by its "
                                   "latest row in the findings",
    "delivery.findings-failed-child": "the findings carry a child that failed, timed out or "
                                      "was cancelled",
    "delivery.children-ended-first": "a run that spawned children ended after all its "
                                     "descendants had settled",
    "delivery.restart-during-deferral": "a restarted actor finds a run still waiting for its "
                                        "descendants",
    "delivery.requester-fallback": "a completion's nested requester session is gone: it goes "
                                   "to that session's own requester",
    "delivery.requester-unavailable": "a completion's nested requester is gone and no "
                                      "fallback exists: it stays retryable",
    # -- operator redrive and dismissal (actors/delivery/redrive.py, DEL-16) -----------------------
    "delivery.corrected-after-give-up": "a newer receipt reached a given-up run: only its "
                                        "retained payload changed, nothing was sent",
    "delivery.redrive-suspended": "an operator redrove a suspended run from its stored payload",
    "delivery.redrive-after-days": "an operator redrove a suspended run a day or more after its "
                                   "suspension (inside its 7-day retention)",
    "delivery.operator-refused-expired": "an operator's redrive came after the sweeper "
                                         "discarded the suspended result (7 days): refused",
    "delivery.suspended-expired": "the sweeper discarded a suspended result 7 days after its "
                                  "suspension (expired)",
    "delivery.sweeper-restored": "a restarted delivery actor re-armed the sweeper from "
                                 "suspended rows in its store",
    "delivery.archive-waited": "a delete-mode run was archived later than its end + "
                               "archiveAfterMinutes: its completion was pending then",
    "delivery.archive-session-reused": "a delete-mode run was archived after a newer run took "
                                       "its session: the newer run's live session stays",
    "delivery.archived-undelivered": "a delete-mode run was archived with its completion given "
                                     "up or not required (resolved, never delivered)",
    "delivery.redrive-failed": "an operator redrove a failed run from its stored payload",
    "delivery.redrive-paused": "an operator redrove a run paused in its retry backoff",
    "delivery.redrive-corrected-payload": "a redrive carried a correction the producer made "
                                          "after the run's end",
    "delivery.dismissed": "an operator dismissed a given-up run (its payload released)",
    "delivery.operator-refused-delivered": "an operator's action was refused: already "
                                           "delivered",
    "delivery.operator-refused-released": "an operator's action was refused: its payload was "
                                          "released",
    "delivery.operator-refused-in-flight": "an operator's action was refused: a send was in "
                                           "flight",
    "delivery.operator-refused-not-ended": "an operator's action was refused: the run had not "
                                           "ended",
    "delivery.operator-refused-not-required": "an operator's action was refused: no "
                                              "completion was asked for",
    # -- requester turns (actors/yields/turns.py, actors/requester/shell.py) -----------------------
    "turns.reset-abandons-turn": "/new or a delete abandoned an open or yielded turn",
    "requester.nested-delete-kills-child": "a nested requester's session deleted once its run "
                                            "was over killed a child run it had spawned",
    "requester.reset-kills-child": "/new or a delete killed a child run that had not ended, "
                                   "its delivery suppressed (reference §c17)",
    "requester.reset-kills-queued-child": "/new or a delete killed a child still queued for "
                                          "a lane slot or its session",
    "requester.reset-kills-batch-member": "/new or a delete killed a running member of a "
                                          "yielded turn's batch",
    "requester.reset-cascades": "/new or a delete killed a child run whose own children were "
                                "still running: they are cancelled with it",
    "requester.reset-spares-ended-child": "/new or a delete found a child that had ended "
                                          "whose delivery was still open: not killed",
    "turns.status-check-before-yield": "a turn checked a child's status, then yielded",
    # -- yield batches and their wakes (actors/delivery/wakes/batch_wake.py, delivery_wakes.py) --
    "delivery.handed-to-batch": "a member's own delivery handed its result to its batch",
    "delivery.correction-handed-to-batch": "a newer receipt (a correction, DEL-12) of a frozen "
                                           "member reopened its delivery and went to its batch",
    "delivery.claimed-while-waiting": "a batch claimed a member waiting between tries",
    "delivery.claimed-before-end-seen": "a batch claimed an ended member whose end the "
                                        "delivery actor had not seen yet",
    "batch.consumed-without-wake": "a yield froze no required child (or a cron requester's)",
    "batch.coalesced-settle": "a settle came for a batch whose wake is already out",
    "batch.deferred": "a batch's wake waits for its members' descendants",
    "batch.deferral-limit": "a batch was deferred ten times and closed undelivered",
    "batch.requester-deleted": "a batch closed: its requester session was deleted",
    "batch.reset-before-wake": "a batch closed: its requester was reset before the wake",
    "batch.reset-during-wake": "a wake reached a session whose yielded turn a reset abandoned",
    "batch.restart-while-dispatching": "a restarted process replays a dispatching wake",
    "batch.visible-reply-missing": "a woken message_tool turn gave no visible reply",
    "batch.retry": "a known undelivered wake is retried on a fresh key",
    "batch.attempts-exhausted": "a wake failed three attempts and closed",
    "batch.taken-on-last-attempt": "a wake refused on its first two attempts was taken on "
                                   "its third, the last one (one under its budget)",
    "batch.gave-up-corrected-member": "a batch closed undelivered, giving up a member whose "
                                      "correction it took (its first answer went on its own)",
    "batch.replay": "an unanswered wake is replayed on the same key",
    "batch.replays-exhausted": "an unanswered wake was replayed three times and closed",
    "batch.permanent-error": "a wake was refused with a permanent error and closed",
    "batch.stale-answer": "an answer came for a wake attempt no longer out",
    "batch.announced-individually": "a wake carries no findings: results went individually",
    "batch.released-suspended-member": "a taken batch wake released a member whose own "
                                       "delivery had given up (suspended) to delivered",
    "batch.consumed-all-killed": "a batch whose every member was killed was consumed "
                                 "without a wake",
    "batch.findings-truncated": "a wake's findings cut a result at the shared cap",
    "batch.findings-summarized": "a wake's findings folded children into the summary line",
    "batch.reconcile-interrupted": "a wake asks to reconcile unfinished children",
    "batch.route-notices-capped": "a wake's route notices were capped at 1,024 characters",
    "batch.requester-turn-pending": "a wake reached a session busy in another turn: it waits, "
                                    "spending no attempt",
    # -- private parent completion (actors/private/rules.py; PRV-1..8) -----------------------------
    "private.spawn-refused": "sessions_spawn refused completionTarget with a forbidden option",
    "private.retained-while-turn-open": "a private result finished while its spawning turn was "
                                        "open: retained, no deadline running",
    "private.window-started-at-release": "a private result's window started at its release, "
                                         "after the child had ended",
    "private.window-ends-at-its-instant": "a released private result's attempt was due at the "
                                          "very end of its 30-minute window from the release, "
                                          "and gave up (PRV-7, §c11: a passed deadline)",
    "private.unanswered-until-window-end": "a private try got no answer until its 30-minute "
                                           "window ended (no 120 s timeout: OpenClaw 2026.9.6 "
                                           "gives a private completion's agent call none); the "
                                           "attempt gave up for the passed deadline",
    "private.answered-past-announce-timeout": "a private try was answered (taken or refused) "
                                              "more than 120 s after its send: no timeout had "
                                              "counted it unanswered",
    "private.handoff-unavailable": "a private result's requester was reset or deleted before the "
                                   "hand-off: closed as completion_handoff_unavailable",
    "private.refused-by-session": "a session refused a private hand-off bound to an earlier "
                                  "incarnation (a reset raced the hand-off)",
    "private.status-check-before-yield": "a turn checked a private child's status, then yielded",
    "private.yield-with-public-siblings": "a turn that spawned private and public children "
                                          "yielded",
    "private.batch-handoff-unavailable": "a private batch's requester was reset or deleted "
                                         "before its wake: closed as "
                                         "completion_handoff_unavailable",
    # -- a child session's own run queue (actors/nesting/session_queue.py) -------------------------
    "requester.session-queued": "a run was spawned into a child session whose earlier run had "
                                "not ended: it waits for it",
    "requester.session-two-waiting": "a run was spawned into a child session whose queue "
                                     "already held a waiting run: two wait behind the running one",
    "child.lane-queued-after-session": "a run that waited for its session then waited for a "
                                       "slot of the maxConcurrent lane",
    "child.aborted-in-session-queue": "a run was aborted while it waited for its session's "
                                      "earlier run (it left the queue)",
    # -- unfrozen waves (actors/yields/waves.py, actors/delivery/wakes/delivery_waves.py; §c9) --
    "wave.wake": "a wave of a requester's non-yield children settled and got its settle wake",
    "wave.consumed-one-delivered": "a wave of exactly one already-delivered child was consumed "
                                   "without a wake",
    "wave.joined-late": "a sibling joined a wave after an earlier wave carried part of it",
    "wave.restart-while-dispatching": "a restarted process replays a wave wake frozen at its "
                                      "dispatch: the process died between the freeze and the send",
    "wave.descendants-pending": "a settled wave waited for a member's descendants (it just "
                                "returned; a later settle rechecked)",
}


def check(name: str) -> str:
    """``name`` itself, or a ValueError when no probe of that name is declared."""
    if name not in PROBES:
        raise ValueError(f"unknown probe {name!r}; declare it in actors/probes.py")
    return name
