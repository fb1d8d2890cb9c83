"""What each known-bug variant of the model breaks (SIM-8), by name: the catalogue the command
line, scenario files and the benches list and check names against. The switches themselves, each
read beside the code it breaks, are in ``actors/mutants.py``."""

from __future__ import annotations

from actors.mutants import (
    MUTANT_ACK_AS_CHECKPOINT,
    MUTANT_ANNOUNCE_SKIP_AS_TEXT,
    MUTANT_ANSWER_TIMEOUT_EARLY,
    MUTANT_ARCHIVE_WHILE_PENDING,
    MUTANT_BACKOFF_CLAMPED,
    MUTANT_BACKOFF_UNCAPPED,
    MUTANT_CALLBACK_FAILURE_UNDELIVERS,
    MUTANT_CHILD_LIMIT_OFF_BY_ONE,
    MUTANT_CHUNK_TO_LINE_END,
    MUTANT_CLAIM_CLEARED_FIRST,
    MUTANT_CLEANUP_NOT_RECORDED,
    MUTANT_CLOSED_TURN_RESCHEDULED,
    MUTANT_COMPACTION_FORGETS_TURNS,
    MUTANT_DEDUPE_OFF,
    MUTANT_DELIVERED_IGNORES_CORRECTION,
    MUTANT_EXPIRY_FROM_SPAWN,
    MUTANT_EXPIRY_INCLUSIVE,
    MUTANT_FAILED_RESULT_REPLAYED,
    MUTANT_FALLBACK_DROPPED,
    MUTANT_FINDINGS_RERENDERED,
    MUTANT_FRESH_KEY_AFTER_RESTART,
    MUTANT_FROZEN_CAP_CHARS,
    MUTANT_FULL_TEXT_IN_MEMORY,
    MUTANT_GIVE_UP_AFTER_TRIES,
    MUTANT_GIVE_UP_CORRECTION_SENDS,
    MUTANT_HISTORY_BYTES_UNCLEANED,
    MUTANT_HISTORY_FIELD_CUT_AT_LIMIT,
    MUTANT_HISTORY_PAGING_ALWAYS,
    MUTANT_KEY_WITHOUT_RUN_ID,
    MUTANT_KILL_ANNOUNCED,
    MUTANT_KILLED_BATCH_WOKEN,
    MUTANT_LANE_NEWEST_FIRST,
    MUTANT_LAST_ASSISTANT_MESSAGE,
    MUTANT_MIRROR_BLOCKS_SEND,
    MUTANT_NESTED_DELETE_KEEPS_CHILDREN,
    MUTANT_NESTED_TOP_LEVEL_INSTRUCTION,
    MUTANT_NO_ANSWER_RECOVERY,
    MUTANT_NO_DESCENDANT_GATING,
    MUTANT_NOT_REQUIRED_DELIVERED,
    MUTANT_OTHER_RUN_PROOF,
    MUTANT_OVERRIDE_KEEPS_THREAD,
    MUTANT_PAYLOAD_DROPPED_EARLY,
    MUTANT_PERMANENT_RETRIED,
    MUTANT_PRIVATE_AFTER_RESET,
    MUTANT_PRIVATE_TO_CHANNEL,
    MUTANT_PRIVATE_TRY_TIMES_OUT,
    MUTANT_PRIVATE_USAGE_STATS,
    MUTANT_PRIVATE_YIELD_FINAL_TO_CHANNEL,
    MUTANT_QUEUE_START_EARLY,
    MUTANT_RECEIPT_BY_ARRIVAL,
    MUTANT_RECOVERY_ONE_SHORT,
    MUTANT_RECOVERY_UNBOUNDED,
    MUTANT_REDRIVE_SAME_GENERATION,
    MUTANT_REOPEN_KEEPS_KEY,
    MUTANT_RESET_KEEPS_CHILDREN,
    MUTANT_RESET_SPARES_GRANDCHILDREN,
    MUTANT_RESTART_NOTICE_SKIPPED,
    MUTANT_RETENTION_FROM_END,
    MUTANT_RETRY_PARTIAL_CHUNKS,
    MUTANT_RUN_TIMEOUT_UNFLOORED,
    MUTANT_SESSION_QUEUE_NEWEST_FIRST,
    MUTANT_SESSION_QUEUE_OFF,
    MUTANT_SHARED_CAP_CUT_AT_LIMIT,
    MUTANT_SILENT_NO_REPLY,
    MUTANT_SPAWNER_PERMISSION,
    MUTANT_STALE_FINDINGS,
    MUTANT_STATUS_CHECK_CONSUMES_PRIVATE,
    MUTANT_STEER_NO_REPLACEMENT,
    MUTANT_STOP_REASON_COMPLETED,
    MUTANT_STORED_ROUTE_BEATS_ORIGIN,
    MUTANT_TWO_WAKES,
    MUTANT_WAIT_EARLIER_TURN,
    MUTANT_WAKE_ATTEMPTS_ONE_SHORT,
    MUTANT_WAKE_INTO_BUSY_TURN,
    MUTANT_WAKE_KEEPS_SUSPENDED,
    MUTANT_WAKE_TOKEN_REUSED,
    MUTANT_WARNING_LOSES_ERROR,
    MUTANT_WAVE_NEVER_WOKEN,
    MUTANT_WAVE_STALE_SIBLING,
)

MUTANTS: dict[str, str] = {
    MUTANT_FRESH_KEY_AFTER_RESTART: (
        "a restarted delivery actor re-sends pending completions under a fresh idempotency key, so "
        "a completion that reached its requester before the crash reaches it again (DEL-3)"
    ),
    MUTANT_RETRY_PARTIAL_CHUNKS: (
        "the delivery core retries a send whose error chain shows part of it already reached the "
        "platform, so a chunked completion that broke after its first chunks is sent again "
        "(DEL-11)"
    ),
    MUTANT_LAST_ASSISTANT_MESSAGE: (
        "the original bug (the specification's case 000): the result reader takes the last "
        "assistant message even when its content is empty, losing the partial answer of a child "
        "cut off at its token limit (OUT-1)"
    ),
    MUTANT_PERMANENT_RETRIED: (
        "a permanent rejection is retried as if it were transient, so a dead channel is hit again "
        "and again (DEL-10)"
    ),
    MUTANT_KEY_WITHOUT_RUN_ID: (
        "the idempotency key leaves out the run id, so a re-run of the same child session is taken "
        "for a newer receipt of the earlier run and replaces that run's answer in the requester's "
        "transcript (DEL-15, DEL-3)"
    ),
    MUTANT_BACKOFF_UNCAPPED: "the registry backoff keeps doubling past its 300 s cap (DEL-10)",
    MUTANT_EXPIRY_FROM_SPAWN: (
        "the 30-minute completion expiry is counted from the spawn instead of the run's end, so "
        "delivery gives up early (DEL-10)"
    ),
    MUTANT_EXPIRY_INCLUSIVE: (
        "an attempt due exactly at the expiry deadline starts instead of giving up (``>`` for "
        "``>=``), so a completion the registry waited out to its last instant is sent once more "
        "(DEL-10)"
    ),
    MUTANT_BACKOFF_CLAMPED: (
        "a registry backoff due past the 30-minute expiry is cut short to end at the deadline, "
        "so the completion is given up at its expiry instead of at the first resume after it, "
        "a whole backoff later, as OpenClaw 2026.9.6 does (DEL-10)"
    ),
    MUTANT_NOT_REQUIRED_DELIVERED: (
        "a run spawned with expectsCompletionMessage false is delivered anyway (DEL-1)"
    ),
    MUTANT_GIVE_UP_AFTER_TRIES: (
        "when the four transport tries of an attempt fail, delivery gives up instead of backing "
        "off and trying again until the expiry (DEL-10)"
    ),
    MUTANT_SILENT_NO_REPLY: (
        "a required run that answered NO_REPLY or nothing is skipped silently instead of reaching "
        "its requester as (no output) (DEL-2)"
    ),
    MUTANT_DEDUPE_OFF: (
        "the requester session records every completion it receives, so a retried or duplicated "
        "completion reaches its model twice (DEL-3)"
    ),
    MUTANT_FAILED_RESULT_REPLAYED: (
        "a run that failed reports the text it captured before failing as its result (DEL-14)"
    ),
    MUTANT_STOP_REASON_COMPLETED: (
        "the child's result reports stop reason 'completed' whatever ended its turn (OUT-6)"
    ),
    MUTANT_ANNOUNCE_SKIP_AS_TEXT: (
        "a reply that is exactly ANNOUNCE_SKIP is announced to the requester as text instead of "
        "announcing nothing (reference §c1, DEL-2)"
    ),
    MUTANT_CLEANUP_NOT_RECORDED: (
        "a run's cleanup is traced but never recorded in the store, so a restarted delivery actor "
        "cleans every resolved run up again (DEL-16)"
    ),
    MUTANT_NESTED_TOP_LEVEL_INSTRUCTION: (
        "a completion for a nested requester (itself a sub-agent) is rendered with the top-level "
        "instruction to tell the user, not the internal-update form (reference §c5, DEL-4)"
    ),
    MUTANT_NO_DESCENDANT_GATING: (
        "a child that spawned children announces as soon as it ends, while its descendants are "
        "still pending (reference §c8, DEL-6)"
    ),
    MUTANT_OVERRIDE_KEEPS_THREAD: (
        "a binding or hook override that picks another chat keeps the old route's thread, so the "
        "completion lands in a thread of the wrong chat (DEL-5)"
    ),
    MUTANT_STORED_ROUTE_BEATS_ORIGIN: (
        "the session's stored route (lastChannel/lastTo/lastThreadId) wins over the requester "
        "turn's captured origin, so a completion goes to a stale chat or thread (DEL-5)"
    ),
    MUTANT_SPAWNER_PERMISSION: (
        "a session-control action in a turn started by a completion report is checked against the "
        "person who spawned that child instead of the current caller, so the report carries the "
        "original person's permission (DEL-17)"
    ),
    MUTANT_CLOSED_TURN_RESCHEDULED: (
        "a closed-turn transcript rejection is taken for an unclassified error, so the completion "
        "is rescheduled with backoff instead of failing permanently (DEL-7)"
    ),
    MUTANT_CALLBACK_FAILURE_UNDELIVERS: (
        "a receive-callback failure after a confirmed hand-off makes the registry record the "
        "completion undelivered (given up) although the requester has it (DEL-9)"
    ),
    MUTANT_WARNING_LOSES_ERROR: (
        "the blocked-completion warning carries only the last try's error, so an unanswered try "
        "replaces the concrete delivery error with a bare 'gateway timeout' (DEL-9)"
    ),
    MUTANT_NO_ANSWER_RECOVERY: (
        "a required run that answered NO_REPLY or nothing is announced as (no output) but "
        "lost-answer recovery never starts (DEL-2)"
    ),
    MUTANT_RECOVERY_UNBOUNDED: (
        "lost-answer recovery ignores its attempt bound and keeps re-reading a silent run (DEL-2)"
    ),
    MUTANT_PAYLOAD_DROPPED_EARLY: (
        "giving up drops the run's result text from the store, so suspended work loses the payload "
        "a redrive needs before its obligations resolved (DEL-16)"
    ),
    MUTANT_FULL_TEXT_IN_MEMORY: (
        "the registry keeps every resolved run's full task and result text in memory instead of a "
        "short preview and lifecycle metadata (DEL-16)"
    ),
    MUTANT_MIRROR_BLOCKS_SEND: (
        "a direct delivery's send waits for its transcript mirror, which waits behind the work "
        "queued on the requester session, so the delivery actor learns of it late (DEL-8)"
    ),
    MUTANT_COMPACTION_FORGETS_TURNS: (
        "compacting a requester session's transcript drops the turn identity of the completion "
        "inputs it folds, so a resend of one reaches the requester's model again (DEL-7)"
    ),
    MUTANT_RECEIPT_BY_ARRIVAL: (
        "the requester session lets the receipt that arrived last own a run's reply, whatever its "
        "producer end time, so an older receipt delayed past a correction replaces it (DEL-12)"
    ),
    MUTANT_CLAIM_CLEARED_FIRST: (
        "on a confirmed hand-off the delivery actor clears the recovery claim before it saves the "
        "delivery evidence, so a crash between the two leaves neither and the restart sends a "
        "delivered completion again (DEL-13)"
    ),
    MUTANT_OTHER_RUN_PROOF: (
        "a restart's checkpoint reconciliation takes the requester's checkpoint of another run of "
        "the same child session as proof, so a run whose result never arrived is recorded "
        "delivered (DEL-13, DEL-15)"
    ),
    MUTANT_STALE_FINDINGS: (
        "a run's findings take every row its session's children ever had: a stale row of an "
        "earlier run, or an older row of the same child session, leaks into the announcement "
        "(reference §c8, DEL-6)"
    ),
    MUTANT_CHILD_LIMIT_OFF_BY_ONE: (
        "maxChildrenPerAgent lets a session have one more active child than the limit (reference "
        "§c15, DEL-6)"
    ),
    MUTANT_FALLBACK_DROPPED: (
        "a completion whose nested requester session is gone is recorded delivered without being "
        "sent anywhere, instead of falling back to that requester's requester (reference §c2, "
        "DEL-4)"
    ),
    MUTANT_FINDINGS_RERENDERED: (
        "a run's findings are rendered again by each delivery incarnation instead of kept with the "
        "run: after a restart, a child's later correction rewrites an announcement already sent "
        "under the same key (DEL-6, DEL-12)"
    ),
    MUTANT_REDRIVE_SAME_GENERATION: (
        "an operator's redrive sends the retained payload again under the old generation's key "
        "instead of the next generation's, so the gateway and the requester take it for a retry of "
        "the send that gave up (DEL-16, DEL-12)"
    ),
    MUTANT_GIVE_UP_CORRECTION_SENDS: (
        "a correction arriving after the delivery gave up is sent at once as a new generation, as "
        "for a delivered run, instead of only updating the retained payload for an operator's "
        "redrive (DEL-16)"
    ),
    MUTANT_RETENTION_FROM_END: (
        "the sweeper counts a suspended result's 7-day retention from its run's end instead of "
        "from the suspension, so a result suspended later than its end (its 30-minute expiry, "
        "a refusal after retries) is discarded before its 7 days are up (DEL-16, reference §c18)"
    ),
    MUTANT_ARCHIVE_WHILE_PENDING: (
        "the sweeper archives a delete-mode run at its end + archiveAfterMinutes even while its "
        "required completion is still pending (retried, backing off, waiting for descendants), "
        "instead of waiting until the completion resolves (DEL-16, reference §c18)"
    ),
    MUTANT_WAIT_EARLIER_TURN: (
        "a yielded batch also waits until every child of the requester's earlier turns has settled "
        "(reference §c9: a child of an earlier turn never delays it; YLD-1)"
    ),
    MUTANT_TWO_WAKES: (
        "the outbox forgets that a batch's wake is out or delivered: a later settle of the same "
        "batch sends another wake on a fresh key (reference §c9 coalescing; YLD-1)"
    ),
    MUTANT_WAKE_INTO_BUSY_TURN: (
        "the requester takes a batch wake while another of its turns is running, instead of "
        "answering requester_turn_pending (reference §b, §c11; YLD-3)"
    ),
    MUTANT_WAKE_TOKEN_REUSED: (
        "each wake dispatch after an answer starts its answer-timeout tokens at 1 again, so an "
        "earlier attempt's 120 s timeout falling due as a later attempt is sent (or while the wake "
        "waits on a busy requester) is read as that attempt going unanswered: a replay past the "
        "budget (reference §c11, §c17; YLD-3)"
    ),
    MUTANT_PRIVATE_TO_CHANNEL: (
        "a private (completionTarget parent) result is handed over like a public one, so the "
        "gateway also sends it to the requester's external channel (PRV-1)"
    ),
    MUTANT_PRIVATE_USAGE_STATS: (
        "a private hand-off carries the stats line with its changing usage statistics, so a "
        "retried hand-off is not the same input (PRV-8)"
    ),
    MUTANT_RESET_KEEPS_CHILDREN: (
        "a requester reset (/new) or delete leaves the session's unended child runs running, and "
        "their results are handed to the new conversation, instead of killing them with delivery "
        "suppressed (recorded not_required; DEL-1, reference §c17)"
    ),
    MUTANT_RUN_TIMEOUT_UNFLOORED: (
        "a spawn's runTimeoutSeconds counts its fraction of a second (30.9 s gives a 30.9 s "
        "deadline) instead of being floored to whole seconds, so a run still going then ends "
        "timeout late (DEL-14, reference §c18)"
    ),
    MUTANT_KILL_ANNOUNCED: (
        "a kill of a running run (and of its unended descendants) ends it killed but leaves its "
        "delivery required, so its failure is announced to the requester, instead of suppressing "
        "it (recorded not_required; DEL-1, reference §c18)"
    ),
    MUTANT_STEER_NO_REPLACEMENT: (
        "a steer aborts the running run without an announce but starts no replacement run in its "
        "child session, so nothing answers the steered task (DEL-1, reference §c18)"
    ),
    MUTANT_RESTART_NOTICE_SKIPPED: (
        "recovery resumes a child interrupted by a Gateway restart but owes its requester no "
        "notice, so the requester reads the completion without first reading `Resumed your "
        "interrupted task after the Gateway restart.` (DEL-13, reference §c18)"
    ),
    MUTANT_NESTED_DELETE_KEEPS_CHILDREN: (
        "a nested requester's session deleted once its run is over leaves the child runs it "
        "spawned running: their completions fall back one level up (DEL-4) instead of being killed "
        "with delivery suppressed (recorded not_required; DEL-1, reference §c17)"
    ),
    MUTANT_RESET_SPARES_GRANDCHILDREN: (
        "a requester reset (/new) or delete kills the session's unended child runs but not the "
        "runs those children spawned: a killed run's own children run on and announce to a session "
        "whose run is over (reference §c17, DEL-6)"
    ),
    MUTANT_PRIVATE_AFTER_RESET: (
        "a private result is handed to its requester session even after that session was reset "
        "(/new) since the spawn, instead of being closed as completion_handoff_unavailable (PRV-3)"
    ),
    MUTANT_SESSION_QUEUE_OFF: (
        "a run spawned into a child session whose earlier run has not ended starts at once instead "
        "of waiting in the session's queue, so two runs of one session overlap and a grandchild "
        "spawned then belongs to either (a reused key, FMT-6; DEL-6)"
    ),
    MUTANT_PRIVATE_YIELD_FINAL_TO_CHANNEL: (
        "a turn resumed by a private batch's wake treats its plain final as a deliverable reply "
        "(reference §e7's newer reading taken too far): in message_tool mode it reaches the "
        "conversation too, instead of staying internal (PRV-2)"
    ),
    MUTANT_STATUS_CHECK_CONSUMES_PRIVATE: (
        "a status check of a completed private child counts as its hand-off: the registry records "
        "the result delivered, so it never reaches the parent's turn (PRV-6)"
    ),
    MUTANT_WAVE_STALE_SIBLING: (
        "an unfrozen wave ignores the overlap rule: every settled sibling of the requester's "
        "non-yield turns joins it, long-settled, non-overlapping older children included "
        "(reference §c9 unfrozen batch; YLD-1)"
    ),
    MUTANT_WAVE_NEVER_WOKEN: (
        "a settled wave of two or more overlapping siblings is never woken: the delivery side "
        "finds it due and sends nothing (reference §c9 unfrozen batch; YLD-1)"
    ),
    MUTANT_SESSION_QUEUE_NEWEST_FIRST: (
        "a busy child session hands itself, when its run ends, to the newest run waiting for it "
        "instead of the first: no two runs overlap, but a session's runs no longer start in the "
        "order they were spawned (DEL-6)"
    ),
    MUTANT_QUEUE_START_EARLY: (
        "a run told to wait for its child session or a lane slot records its start (the "
        "registry's startedAt, lane.started) as it begins to wait, not when the line lets it go; "
        "it still streams only then (DEL-6)"
    ),
    MUTANT_LANE_NEWEST_FIRST: (
        "a freed slot of the maxConcurrent lane goes to the run that began to wait last, not the "
        "first: the lane still caps concurrency, but the oldest waiter starves (DEL-6)"
    ),
    MUTANT_CHUNK_TO_LINE_END: (
        "the gateway keeps lines whole by cutting a long text at the first line break past the "
        "channel's limit, so chunks overflow the channel's longest message; joined they are still "
        "the text (DEL-11)"
    ),
    MUTANT_DELIVERED_IGNORES_CORRECTION: (
        "the registry treats delivered as final: a producer's correction of a delivered run "
        "updates the stored result but opens no next generation, so the requester keeps the older "
        "answer while the store says delivered (DEL-12)"
    ),
    MUTANT_REOPEN_KEEPS_KEY: (
        "a correction that reopens a run sends its next generation under the previous generation's "
        "idempotency key, so the gateway and the requester may take the newer answer for a resend "
        "of the older one (DEL-3, DEL-12)"
    ),
    MUTANT_ACK_AS_CHECKPOINT: (
        "the registry saves a requester's acknowledgement as silent-checkpoint evidence instead of "
        "a sent reply: the evidence kinds a restart must keep distinct run together (DEL-13)"
    ),
    MUTANT_HISTORY_BYTES_UNCLEANED: (
        "a sessions_history page's bytes field measures its rows as the transcript holds them, "
        "before usage, details and over-long fields were cleaned off, so it misstates the size of "
        "the page the reader got (FMT-5, reference §c13)"
    ),
    MUTANT_HISTORY_FIELD_CUT_AT_LIMIT: (
        "sessions_history cuts a text field of exactly 4,000 UTF-16 units, which fits, as if it "
        "were over the limit: < written for <= at the field cut (FMT-5, reference §c16)"
    ),
    MUTANT_HISTORY_PAGING_ALWAYS: (
        "sessions_history answers offset, totalMessages and hasMore (and nextOffset) also when "
        "the caller passed no offset, as if it had asked for offset 0 (FMT-5, reference §c19: "
        "OpenClaw 2026.9.6 gives the paging fields only with an offset)"
    ),
    MUTANT_SHARED_CAP_CUT_AT_LIMIT: (
        "the shared cap's layout keeps every payload strictly under 160,000 characters: a lone "
        "completion's announce block of exactly 160,000 characters, which fits, is cut with a "
        "truncation marker, and a cut one keeps a head a character short: < written for <= at "
        "the cap (FMT-2)"
    ),
    MUTANT_FROZEN_CAP_CHARS: (
        "the frozen-result cap counts and cuts characters instead of UTF-8 bytes, so a result of "
        "multibyte characters is frozen far over 102,400 bytes, with a wrong KB figure in its "
        "notice (FMT-2, reference §c14)"
    ),
    MUTANT_WAKE_KEEPS_SUSPENDED: (
        "a batch wake that carried a member whose own delivery had given up (suspended) is "
        "taken, but the member's row stays suspended, as if the batch's results were not "
        "delivered (YLD-2, reference §b, §c12)"
    ),
    MUTANT_KILLED_BATCH_WOKEN: (
        "a yielded batch or an unfrozen wave whose every member was killed (delivery "
        "suppressed) still wakes its requester, with nothing but cancelled members in it, "
        "instead of being consumed without a wake (YLD-1, reference §c9)"
    ),
    MUTANT_WAKE_ATTEMPTS_ONE_SHORT: (
        "a batch wake closes retries_exhausted after its second refused attempt, one short of "
        "the three its budget allows (YLD-3, reference §c11 \"Batch wake\")"
    ),
    MUTANT_RECOVERY_ONE_SHORT: (
        "lost-answer recovery stops after two attempts, one short of its bound of three, so an "
        "answer whose hand-off was refused twice never reaches the requester (DEL-2)"
    ),
    MUTANT_ANSWER_TIMEOUT_EARLY: (
        "a try's answer timeout fires at 119,999 ms, one ms before the 120 s announce timeout, "
        "so an answer in that millisecond may count as a gateway timeout (DEL-10, reference "
        "§c11 announceTimeoutMs)"
    ),
    MUTANT_PRIVATE_TRY_TIMES_OUT: (
        "a private hand-off's try times out after 120 s as a public one does, and is sent again; "
        "OpenClaw 2026.9.6 gives a private completion's agent call no timeout, so an unanswered "
        "private try waits until its 30-minute window ends (PRV-7, DEL-10)"
    ),
}
