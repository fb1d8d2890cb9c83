"""Known-bug variants of the model, switched on by name (SIM-8).

Each one reintroduces a real failure mode; exploring with it on must find a violation, with none on
must find none. The cores check membership in the frozenset they are given.
"""

from __future__ import annotations

# Switches read outside the delivery core, each beside the code it breaks.
# The frozen result's cap counts and cuts characters, not UTF-8 bytes (actors/child/frozen.py).
MUTANT_FROZEN_CAP_CHARS = "frozen-cap-chars"
# A lone completion's announce block of exactly 160,000 characters, which fits the shared cap, is
# cut as if it were over it: ``<`` written for ``<=`` (actors/announce/layout.py, wired in
# actors/delivery/payload.py).
MUTANT_SHARED_CAP_CUT_AT_LIMIT = "shared-cap-cut-at-limit"
# Lines are kept whole by running past the limit to the next line break, so a chunk overflows
# its channel's longest message (actors/gateway/core.py).
MUTANT_CHUNK_TO_LINE_END = "chunk-overflows-to-line-end"
# Routing (actors/gateway/routing.py).
MUTANT_OVERRIDE_KEEPS_THREAD = "override-keeps-thread"
MUTANT_STORED_ROUTE_BEATS_ORIGIN = "stored-route-first"
# A freed lane slot goes to the run that began to wait last (actors/nesting/lane.py).
MUTANT_LANE_NEWEST_FIRST = "lane-newest-first"
# A run told to wait records its start as it begins to wait, not when the line lets it go
# (actors/child/shell.py): it still runs only then.
MUTANT_QUEUE_START_EARLY = "queue-start-early"
# A run spawned into a busy session starts at once; or the session hands itself to the newest
# waiting run, not the first (actors/nesting/session_queue.py).
MUTANT_SESSION_QUEUE_OFF = "session-queue-off"
MUTANT_SESSION_QUEUE_NEWEST_FIRST = "session-queue-newest-first"
# Spawner permission (actors/permissions.py).
MUTANT_SPAWNER_PERMISSION = "spawner-permission"
# The requester session records every completion; the last receipt to arrive owns the reply,
# whatever its end time (actors/requester/session.py).
MUTANT_DEDUPE_OFF = "dedupe-off"
# ... and compaction drops the turn identities of the inputs it folds (DEL-7).
MUTANT_COMPACTION_FORGETS_TURNS = "compaction-drops-turns"
MUTANT_RECEIPT_BY_ARRIVAL = "receipt-by-arrival"
# sessions_history's page (actors/history/sessions.py): its ``bytes`` measured before cleaning;
# a field of exactly 4,000 units cut (``<`` for ``<=``).
MUTANT_HISTORY_BYTES_UNCLEANED = "history-bytes-uncleaned"
MUTANT_HISTORY_FIELD_CUT_AT_LIMIT = "history-field-cut-at-limit"
# ... and its paging fields come also when the caller passed no offset (the model before §c19).
MUTANT_HISTORY_PAGING_ALWAYS = "history-paging-always"
# A spawn's runTimeoutSeconds keeps its fraction of a second (actors/child/deadline.py).
MUTANT_RUN_TIMEOUT_UNFLOORED = "run-timeout-unfloored"

# Switches inside the delivery core (actors/delivery/table.py).
MUTANT_FRESH_KEY_AFTER_RESTART = "fresh-key-after-restart"
MUTANT_PERMANENT_RETRIED = "permanent-retried"
MUTANT_KEY_WITHOUT_RUN_ID = "key-without-run-id"
MUTANT_BACKOFF_UNCAPPED = "backoff-uncapped"
MUTANT_EXPIRY_FROM_SPAWN = "expiry-from-spawn"
MUTANT_EXPIRY_INCLUSIVE = "expiry-inclusive"
MUTANT_BACKOFF_CLAMPED = "backoff-clamped-to-expiry"
MUTANT_NOT_REQUIRED_DELIVERED = "not-required-delivered"
MUTANT_GIVE_UP_AFTER_TRIES = "give-up-after-tries"
MUTANT_SILENT_NO_REPLY = "silent-no-reply"
MUTANT_ANNOUNCE_SKIP_AS_TEXT = "announce-skip-as-text"
MUTANT_CLEANUP_NOT_RECORDED = "cleanup-not-recorded"
MUTANT_NESTED_TOP_LEVEL_INSTRUCTION = "nested-user-instruction"
MUTANT_NO_DESCENDANT_GATING = "no-descendant-gating"
MUTANT_RETRY_PARTIAL_CHUNKS = "retry-partial-chunks"
MUTANT_LAST_ASSISTANT_MESSAGE = "last-assistant-message"
MUTANT_FAILED_RESULT_REPLAYED = "failed-result-replayed"
MUTANT_STOP_REASON_COMPLETED = "stop-reason-completed"
MUTANT_CLOSED_TURN_RESCHEDULED = "closed-turn-rescheduled"
MUTANT_CALLBACK_FAILURE_UNDELIVERS = "callback-undelivers"
MUTANT_WARNING_LOSES_ERROR = "warning-loses-error"
MUTANT_NO_ANSWER_RECOVERY = "no-answer-recovery"
MUTANT_RECOVERY_UNBOUNDED = "recovery-unbounded"
MUTANT_PAYLOAD_DROPPED_EARLY = "payload-dropped-early"
MUTANT_FULL_TEXT_IN_MEMORY = "full-text-in-memory"
MUTANT_MIRROR_BLOCKS_SEND = "mirror-blocks-send"
# Receipts and recovery claims (actors/records/claims.py, actors/delivery/receipts.py).
MUTANT_CLAIM_CLEARED_FIRST = "claim-cleared-first"
MUTANT_OTHER_RUN_PROOF = "other-run-proof"
MUTANT_DELIVERED_IGNORES_CORRECTION = "delivered-ignores-correction"
MUTANT_REOPEN_KEEPS_KEY = "reopen-keeps-key"
MUTANT_ACK_AS_CHECKPOINT = "ack-as-checkpoint"
# Nesting (docs/nesting.md).
MUTANT_STALE_FINDINGS = "stale-findings"
MUTANT_CHILD_LIMIT_OFF_BY_ONE = "child-limit-off-by-one"
MUTANT_FALLBACK_DROPPED = "fallback-dropped"
MUTANT_FINDINGS_RERENDERED = "findings-rerendered"
# Operator actions (actors/delivery/redrive.py).
MUTANT_REDRIVE_SAME_GENERATION = "redrive-same-generation"
MUTANT_GIVE_UP_CORRECTION_SENDS = "give-up-correction-sent"
# The sweeper of suspended results (actors/delivery/sweeper.py).
MUTANT_RETENTION_FROM_END = "retention-from-run-end"
MUTANT_ARCHIVE_WHILE_PENDING = "archive-while-pending"
MUTANT_WAIT_EARLIER_TURN = "wake-waits-earlier-turn"
MUTANT_TWO_WAKES = "two-wakes-per-batch"
MUTANT_WAKE_INTO_BUSY_TURN = "wake-into-busy-turn"
MUTANT_WAKE_TOKEN_REUSED = "wake-token-reused"
MUTANT_WAKE_KEEPS_SUSPENDED = "wake-keeps-suspended"
MUTANT_KILLED_BATCH_WOKEN = "killed-batch-woken"
# The wake's attempt budget and lost-answer recovery's bound end one attempt early (``>=`` the
# budget less one): issue 36's boundary draws refuse exactly two (actors/delivery/wakes,
# actors/delivery/recovery.py).
MUTANT_WAKE_ATTEMPTS_ONE_SHORT = "wake-attempts-one-short"
MUTANT_RECOVERY_ONE_SHORT = "recovery-one-short"
# A try's 120 s answer timeout fires one ms early (actors/delivery/attempts.py).
MUTANT_ANSWER_TIMEOUT_EARLY = "answer-timeout-early"
# A private try times out after 120 s as a public one does (the model before stop 45; OpenClaw
# 2026.9.6 gives it no timeout, actors/delivery/attempts.py ``answer_wait_ms``).
MUTANT_PRIVATE_TRY_TIMES_OUT = "private-try-times-out"
# Private parent completion (actors/private/rules.py, wired in actors/delivery/table.py and
# delivery.py).
MUTANT_PRIVATE_TO_CHANNEL = "private-to-channel"
MUTANT_PRIVATE_USAGE_STATS = "private-usage-stats"
MUTANT_PRIVATE_AFTER_RESET = "private-after-reset"
# A requester reset or delete and its running children (actors/requester/shell.py, §c17).
MUTANT_RESET_KEEPS_CHILDREN = "reset-keeps-children"
MUTANT_NESTED_DELETE_KEEPS_CHILDREN = "nested-delete-keeps-children"
MUTANT_RESET_SPARES_GRANDCHILDREN = "reset-spares-grandchildren"
# A kill of a running run (actors/requester/shell.py; reference §c18).
MUTANT_KILL_ANNOUNCED = "kill-announced"
# A steer (actors/requester/shell.py; reference §c18).
MUTANT_STEER_NO_REPLACEMENT = "steer-no-replacement"
# A Gateway restart's recovery (actors/child/restart.py; reference §c18).
MUTANT_RESTART_NOTICE_SKIPPED = "restart-notice-skipped"
# A private batch's resumed turn (actors/requester/turns.py) and status checks (PRV-2, PRV-6).
MUTANT_PRIVATE_YIELD_FINAL_TO_CHANNEL = "private-final-visible"
MUTANT_STATUS_CHECK_CONSUMES_PRIVATE = "status-check-consumes"
# Unfrozen waves (actors/yields/waves.py).
MUTANT_WAVE_STALE_SIBLING = "wave-includes-stale-sibling"
MUTANT_WAVE_NEVER_WOKEN = "wave-never-woken"
