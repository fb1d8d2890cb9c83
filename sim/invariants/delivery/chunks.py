"""DEL-11 invariants: chunked text fallback, judged by what the channels received.

Read from the trace alone: what each channel received (``gateway.chunk``: one record per chunk a
channel's user sees), the chunk faults the world injected (``fault`` records of ``chunk-fail`` and
``chunk-abort``, with the chunk's index), the gateway's log of each agent call it was asked to
carry (``gateway.send``), the delivery process's (re)starts (``delivery.start``), what reached the
requester's transcript (``requester.accept``) and the registry's records (``delivery.delivered``).
Whether a send was partial is decided here, from the chunks the channel had already received.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds, shared
from sim.trace import Record

CHUNK_FAULTS = ("chunk-fail", "chunk-abort")


def chunk_sent_once(trace: Sequence[Record]) -> list[Violation]:
    """No chunk of a run's completion reaches its channel twice."""
    seen: dict[tuple[str, str, int], Record] = {}  # by the call's key: a correction is another
    violations = []
    for r in of_kinds(trace, ("gateway.chunk",)):
        if r.kind != "gateway.chunk":
            continue
        at = (r.data["channel"], r.data["key"], r.data["index"])
        first = seen.get(at)
        if first is None:
            seen[at] = r
            continue
        violations.append(Violation(
            "chunk-sent-once", "DEL-11",
            f"chunk {r.data['index'] + 1} of {r.data['run_id']}'s completion reached "
            f"{r.data['channel']} twice (at {first.t_ms} ms and at {r.t_ms} ms)",
            (first.seq, r.seq)))
    return violations


def partial_sends(trace: Sequence[Record]) -> dict[str, Record]:
    """Each completion (by its call's key: a run's correction is another call, DEL-12) whose
    chunked send broke after earlier chunks reached the channel: the fault. Read by three
    oracles: computed once per trace (``index.shared``; read, never change)."""
    return shared(trace, "partial-sends", _partial_sends)


def _partial_sends(trace: Sequence[Record]) -> dict[str, Record]:
    """The reading :func:`partial_sends` shares."""
    received: dict[str, set[int]] = {}
    partial: dict[str, Record] = {}
    for r in of_kinds(trace, ("gateway.chunk", "fault")):
        if r.kind == "gateway.chunk":
            received.setdefault(r.data["key"], set()).add(r.data["index"])
        elif r.kind == "fault" and r.data["kind"] in CHUNK_FAULTS:
            key, index = r.data["key"], r.data["chunk"]
            if index > 0 and set(range(index)) <= received.get(key, set()):
                partial.setdefault(key, r)
    return partial


def incomplete_not_retried(trace: Sequence[Record]) -> list[Violation]:
    """After a chunk fails or aborts with earlier chunks on the channel, the delivery process
    never sends that receipt of the run again, under any key (a restarted process may not have
    recorded the failure; the gateway then refuses the resend, which ``chunk-sent-once``
    checks). Only a newer receipt (a correction, DEL-12) or an operator's redrive (the harness's
    ``world.operator`` request: a new generation, which ``redrive-from-retained`` judges) may
    send the run again."""
    partial = partial_sends(trace)
    open_: dict[str, tuple[Record, int]] = {}  # run -> the broken send's fault, its end time
    ends: dict[str, int] = {}  # key -> the producer end time its sends carried
    violations = []
    for r in of_kinds(trace, ("delivery.start", "world.operator", "fault", "gateway.send")):
        if r.kind == "delivery.start":
            open_.clear()
        elif r.kind == "world.operator" and r.data["action"] == "redrive":
            open_.pop(r.data["run_id"] or "", None)
        elif r.kind == "fault" and partial.get(r.data.get("key", "")) is r:
            open_[r.data["run_id"]] = (r, ends.get(r.data["key"], 0))
        elif r.kind == "gateway.send":
            ends[r.data["key"]] = r.data["ended_at"]
            broken = open_.get(r.data["run_id"])
            if broken is None or r.data["ended_at"] > broken[1]:
                continue
            fault = open_.pop(r.data["run_id"])[0]
            violations.append(Violation(
                "incomplete-not-retried", "DEL-11",
                f"{r.data['run_id']}'s chunked send broke at chunk {fault.data['chunk'] + 1} "
                f"after earlier chunks were sent, yet it was sent again at {r.t_ms} ms",
                (fault.seq, r.seq)))
    return violations


def incomplete_not_delivered(trace: Sequence[Record]) -> list[Violation]:
    """A completion whose chunked send broke part-way is recorded as not delivered and never
    reaches its requester's transcript."""
    partial = partial_sends(trace)
    target: dict[str, str] = {}  # run -> the session of its broken send (DEL-4: may differ)
    for r in of_kinds(trace, ("gateway.send",)):
        if r.kind == "gateway.send" and r.data["run_id"] in partial \
                and r.seq < partial[r.data["run_id"]].seq:
            target[r.data["run_id"]] = r.data["requester"]
    violations = []
    for r in of_kinds(trace, ("delivery.delivered", "requester.accept")):
        if r.kind not in ("delivery.delivered", "requester.accept"):
            continue
        fault = partial.get(r.data["key"])
        if fault is None:
            continue
        if r.kind == "requester.accept" and r.seq < fault.seq \
                and r.actor != target.get(r.data["run_id"]):
            continue  # read earlier by a nested requester since deleted: not this send
        what = "recorded as delivered" if r.kind == "delivery.delivered" else \
            f"accepted by {r.actor}"
        violations.append(Violation(
            "incomplete-not-delivered", "DEL-11",
            f"{r.data['run_id']}'s chunked send broke at chunk {fault.data['chunk'] + 1}, yet it "
            f"was {what}", (fault.seq, r.seq)))
    return violations


def chunks_join_to_text(trace: Sequence[Record]) -> list[Violation]:
    """What a channel received of a completion, joined in order, is the text its requester's
    transcript holds: nothing lost, reordered or added by the split."""
    chunks: dict[tuple[str, str], dict[int, Record]] = {}
    violations = []
    for r in of_kinds(trace, ("gateway.chunk", "requester.accept")):
        if r.kind == "gateway.chunk":
            chunks.setdefault((r.data["session"], r.data["key"]), {})[r.data["index"]] = r
        elif r.kind == "requester.accept":
            session = r.actor.removeprefix("requester:")
            got = chunks.get((session, r.data["key"]))
            if got is None:
                continue
            total = next(iter(got.values())).data["total"]
            joined = "".join(got[i].data["text"] for i in range(total) if i in got)
            if len(got) != total or joined != r.data["text"]:
                violations.append(Violation(
                    "chunks-join-to-text", "DEL-11",
                    f"{r.data['run_id']}: the channel received {len(got)} of {total} chunks "
                    f"({len(joined)} characters) for a completion of {len(r.data['text'])}",
                    (*(c.seq for c in got.values()), r.seq)))
    return violations


INVARIANTS = (
    Invariant("chunk-sent-once", "DEL-11", "safety",
              "No chunk of a completion reaches its channel twice.", chunk_sent_once),
    Invariant("incomplete-not-retried", "DEL-11", "safety",
              "A chunked send that broke after earlier chunks were sent is never sent again by "
              "the same delivery process.", incomplete_not_retried),
    Invariant("incomplete-not-delivered", "DEL-11", "safety",
              "A chunked send that broke part-way is not recorded delivered and never reaches "
              "the requester's transcript.", incomplete_not_delivered),
    Invariant("chunks-join-to-text", "DEL-11", "safety",
              "A channel's chunks of a completion, joined in order, are the text the requester's "
              "transcript holds.", chunks_join_to_text),
)
