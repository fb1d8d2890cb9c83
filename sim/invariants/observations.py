"""The observations the oracles share, read from the trace once per run: what was asked, what
was refused and how, what an outsider saw. No oracle owns this module; every oracle package
reads it (``sim/invariants/settled.py`` adds when a run settled).

The harness records each spawn request with its options (``world.spawn``), every completion the
gateway was handed (``gateway.send``) and every rejection it answered with (``fault`` records
carrying an ``error``), the delivery process's crashes, and the registry's rows when the world
stops (``world.rows``). A run is tied to its request by order: the n-th run the requester's actor
started for a child answers the n-th request for that child. Nothing here reads a value the model
computed about itself (its ``required`` flag, its error class, its attempt counter).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from sim.invariants.index import judged, last_of_kind, of_kinds, shared
from sim.trace import Record

# §c16, as JavaScript evaluates it: ASCII \b and case folding, JavaScript's \s and `.`.
_S = "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_DOT = "[^\n\r\u2028\u2029]"
_FLAGS = re.IGNORECASE | re.ASCII
_TRANSIENT = (
    re.compile(r"\berrorcode=unavailable\b", _FLAGS),
    re.compile(rf"\bstatus{_S}*[:=]{_S}*\"?unavailable\b", _FLAGS),
    re.compile(rf"no active {_DOT}* listener", _FLAGS),
    re.compile(r"gateway not connected", _FLAGS),
    re.compile(r"gateway closed \(1006", _FLAGS),
    re.compile(r"gateway timeout", _FLAGS),
    re.compile(r"\b(econnreset|econnrefused|etimedout|enotfound|ehostunreach|network error)\b",
               _FLAGS),
    re.compile(r"\bUNAVAILABLE\b", re.ASCII),
)
_PERMANENT = tuple(re.compile(p, _FLAGS) for p in (
    "unsupported channel", "unknown channel", "chat not found", "user not found",
    f"bot{_DOT}*not{_DOT}*member", "bot was blocked by the user", "forbidden: bot was kicked",
    "recipient is not a valid", "outbound not configured for channel"))
_CLOSED_TURN = re.compile(
    rf"^(Error: )?(Session transcript keyed user is outside the current turn: [^{_S[1:-1]}]"
    r"|Pending input is no longer active in its admitted transcript\Z)")
_REBOUND = re.compile(r"session writer claim changed before transcript persistence", _FLAGS)
_PLATFORM_REJECTED = "message-not-dispatched"


def _links(chain: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    link: Mapping[str, Any] | None = chain
    while link is not None:
        yield link
        link = link.get("cause")


def chain_class(chain: Mapping[str, Any]) -> str:
    """sent | permanent | transient | other, in §c16's order over every link."""
    links = list(_links(chain))
    if any(link.get("sentBeforeError") or link.get("visibleReplySent") for link in links):
        return "sent"
    found = [_message_class(str(link["message"])) for link in links]
    if any(link.get("platformError") == _PLATFORM_REJECTED for link in links) or any(
            permanent for permanent, _, _ in found):
        return "permanent"
    if any(rebound for _, rebound, _ in found):
        return "transient"
    if any(transient for _, _, transient in found):
        return "transient"
    return "other"


# A run's faults carry the same few messages again and again, and one message's look is ~20
# case-folding regular-expression searches (the ``re`` matcher was ~2.5 % of a default-world
# seed's instructions, wave 11b in docs/performance-log.md): each message is looked at once.
@functools.lru_cache(maxsize=4096)
def _message_class(message: str) -> tuple[bool, bool, bool]:
    """What one link's message says: (a permanent pattern, a writer-claim rebound, a transient
    pattern). The permanent patterns are not looked for in a link that is itself a writer-claim
    rebound (OpenClaw skips them there: issue 24); a typed platform rejection still counts."""
    rebound = _REBOUND.search(message) is not None
    permanent = not rebound and any(p.search(message) for p in (*_PERMANENT, _CLOSED_TURN))
    return permanent, rebound, any(p.search(message) for p in _TRANSIENT)


def is_closed_turn(chain: Mapping[str, Any]) -> bool:
    """Transcript persistence refused the input of a closed turn, in OpenClaw's words (DEL-7)."""
    return any(_CLOSED_TURN.search(str(link["message"])) for link in _links(chain))


def error_class(error: str | Mapping[str, Any]) -> str:
    """``sent``, ``permanent``, ``transient`` or ``other``: an error chain (or a bare message)
    classed as reference §c16 restates it (:func:`chain_class`)."""
    return chain_class({"message": error} if isinstance(error, str) else error)


SETTLE_PREFIX = "announce:requester-settle:"


def is_wake(key: str) -> bool:
    """Whether a completion key is a batch wake's (YLD-1), not one run's own."""
    return key.startswith(SETTLE_PREFIX)


@functools.lru_cache(maxsize=4096)  # the oracles ask about each key many times over
def key_runs(key: str) -> tuple[str, ...]:
    """The run ids a batch-wake key names (``...:<run,run,...>[:yield-g][:retry-n]``)."""
    for part in key[len(SETTLE_PREFIX):].split(":"):
        if part.startswith("run-"):
            return tuple(part.split(","))
    return ()


@attrs.frozen
class Asked:
    """One spawn request as the world made it, and the run that answered it."""

    run_id: str
    child: str
    actor: str  # the requester's actor: where the completion must arrive
    required: bool
    request: Record


def asked_runs(trace: Sequence[Record]) -> dict[str, Asked]:
    """Each run that answered a spawn request, by run id (read by many oracles: computed once
    per trace, ``index.shared``; read, never change)."""
    return shared(trace, "asked", _asked_runs)


# What a steer's replacement takes from its own request; every other field of its ask is the
# steered run's (reference §c18; OpenClaw's ``replaceSubagentRunAfterSteer`` copies the run it
# replaces, ``completion.required`` included).
_STEER_OWN = ("request", "caller", "turn", "incarnation", "answer_lost", "timeout_ms", "plan")


def _asked_runs(trace: Sequence[Record]) -> dict[str, Asked]:
    waiting: dict[tuple[str, str], list[Record]] = {}
    asked: dict[str, Asked] = {}
    latest: dict[tuple[str, str], Asked] = {}  # (requester actor, child) -> its latest run's ask
    steered: dict[tuple[str, str], Asked] = {}  # a steer stopped this run: its replacement next
    steers: set[int] = set()  # the request numbers of steers (``world.action``)
    for r in of_kinds(trace, ("world.spawn", "spawn.refused", "spawn", "steer",
                              "requester.refused", "world.action")):
        if r.kind == "world.action":
            if r.data["action"] == "steer":
                steers.add(r.data["request"])
        elif r.kind == "world.spawn":
            waiting.setdefault((r.data["actor"], r.data["child"]), []).append(r)
        elif r.kind == "steer" and r.data["killed"] and (r.actor, r.data["child"]) in latest:
            steered[(r.actor, r.data["child"])] = latest[(r.actor, r.data["child"])]
        elif r.kind in ("steer", "requester.refused"):
            # A steer's replacement is asked with it; a steer refused, or one that found
            # nothing running, starts none (reference §c18): that request never runs.
            if (r.kind == "steer" and not r.data["killed"]) or (
                    r.kind == "requester.refused" and r.data["action"] == "steer"):
                unanswered = waiting.get((r.actor, r.data["child"]))
                if unanswered:
                    unanswered.pop()
        elif r.kind == "spawn.refused":
            # Refused (reference §c15; an invalid private request, PRV-4): that request never
            # runs; the next one may.
            refused = waiting.get((r.actor, r.data["child"]))
            if refused:
                refused.pop(0)
        elif r.kind == "spawn":
            requests = waiting.get((r.actor, r.data["child"]))
            if requests:
                request = requests.pop(0)
                source = steered.pop((r.actor, r.data["child"]), None)
                if source is not None and request.data["request"] in steers:
                    # A steer's replacement is the steered run again (its ask, with the
                    # steer's own fields): the world's record of it was built from the latest
                    # spawn the world asked for that child, which may have been refused since
                    # (seed 47522: a refused ask with expectsCompletionMessage true; seed 39180:
                    # a refused keep-mode ask after the delete-mode run the steer replaced).
                    request = attrs.evolve(request, data={
                        **source.request.data,
                        **{k: request.data[k] for k in _STEER_OWN if k in request.data}})
                found = asked[r.data["run_id"]] = Asked(
                    r.data["run_id"], request.data["child"], request.data["actor"],
                    request.data["required"], request)
                latest[(r.actor, r.data["child"])] = found
    return asked


def killed_by_reset(trace: Sequence[Record]) -> dict[str, Record]:
    """run_id -> the reset or delete of its requester session that found it not yet ended, as an
    outsider sees the session's own record of it (``requester.lifecycle``, after the run's
    ``spawn`` and before its ``child.end``): OpenClaw kills such a run with delivery suppressed,
    so nothing of it is owed (reference §c17). A run that had ended keeps its delivery.

    A nested session the world deleted (``world.delete-session``, what was asked) must record
    its deletion in that same instant; if it does not, the runs it spawned that were still
    running once that instant was over are owed the kill all the same (dated by the world's
    record), so a session that ignores its deletion cannot hide from the oracle. Computed once
    per trace (read, never change)."""
    return shared(trace, "killed", _killed_by_reset)


def _killed_by_reset(trace: Sequence[Record]) -> dict[str, Record]:
    """The reading :func:`killed_by_reset` shares."""
    running: dict[str, dict[str, None]] = {}  # requester actor -> its runs not yet ended
    owner: dict[str, str] = {}
    killed: dict[str, Record] = {}
    asked: dict[str, Record] = {}  # session actor -> the world's deletion not yet recorded by it

    def unanswered(now_ms: int | None) -> None:
        for actor, deletion in list(asked.items()):
            if now_ms is None or now_ms > deletion.t_ms:
                del asked[actor]
                for run_id in running.pop(actor, {}):
                    killed.setdefault(run_id, deletion)

    for r in trace:
        kind = r.kind
        if asked:
            unanswered(r.t_ms)
        if kind == "spawn":
            running.setdefault(r.actor, {})[r.data["run_id"]] = None
            owner[r.data["run_id"]] = r.actor
        elif kind == "child.end":
            running.get(owner.get(r.data["run_id"], ""), {}).pop(r.data["run_id"], None)
        elif kind == "requester.lifecycle":
            asked.pop(r.actor, None)
            for run_id in running.pop(r.actor, {}):
                killed.setdefault(run_id, r)
        elif kind == "world.delete-session":
            asked[f"requester:{r.data['session']}"] = r
    unanswered(None)
    return killed


def final_rows(trace: Sequence[Record]) -> dict[str, str]:
    """run_id -> delivery status in the registry when the world stopped ({} if not recorded)."""
    found = last_of_kind(trace, "world.rows")
    return {} if found is None else {
        row["run_id"]: row["delivery_status"] for row in found.data["rows"]}


def is_rejection(r: Record) -> bool:
    """A send fault, a deleted session refusing a completion that reached it (DEL-4), or the
    gateway refusing a repeat of a partly sent key (DEL-11; seed 5836)."""
    return ((r.kind == "fault" and "error" in r.data and "run_id" in r.data)
            or r.kind == "requester.gone" or r.kind == "gateway.refused")


def _rejection_class(r: Record) -> str | None:
    if r.kind == "fault" and r.data.get("kind") in ("chunk-fail", "chunk-abort"):
        return "sent"
    return error_class(r.data["error"]) if is_rejection(r) else None


# How each refusal of a run was classed, computed once per trace: the oracles ask about the same
# records many times over (about 7 ``rejection_class`` calls per trace record, issue 25), and a
# chain's class costs a dozen regular-expression searches. Kept with the judged run's grouping
# (``index.shared``), as :func:`asked_runs` keeps its requests.
def rejections(trace: Sequence[Record]) -> dict[int, str]:
    """Each refusal's class (see :func:`rejection_class`) by its trace position."""
    return shared(trace, "rejections", _classify)


def _classify(trace: Sequence[Record]) -> dict[int, str]:
    classes = {}
    for r in of_kinds(trace, ("fault", "requester.gone", "gateway.refused")):  # no other is
        klass = _rejection_class(r)
        if klass is not None:
            classes[r.seq] = klass
    return classes


def rejection_class(r: Record) -> str | None:
    """How the gateway refused a send, if ``r`` is a refusal: a broken later chunk (a
    ``chunk-fail`` or ``chunk-abort`` fault) comes after earlier chunks reached the channel, so it
    is ``sent`` whatever the platform's error said; any other send fault is classed by its chain.
    Read from :func:`rejections` when ``r`` belongs to the run being judged."""
    if r.kind != "fault" and r.kind != "requester.gone" and r.kind != "gateway.refused":
        return None  # only these can be refusals (:func:`is_rejection`)
    index = judged()
    if index is not None and r.seq < index.size and index.trace[r.seq] is r:
        classes = index.readings.get("rejections")
        if isinstance(classes, dict):
            return classes.get(r.seq)
    return _rejection_class(r)


def is_delivery_crash(r: Record) -> bool:
    return r.kind == "crash" and r.actor == "delivery"


# An announcement's result block (FMT-2): the child's text between these markers, with
# ``&`` and ``<`` escaped (``&amp;``, ``&lt;``) so child text cannot forge the framing.
DATA_OPEN = "<prompt-data>\n"
DATA_CLOSE = "\n</prompt-data>"


# Five oracles read the block of each announcement the requester took (announce-block,
# result-intact, findings-scoped, redrive-from-retained, lost-answer-recovery): each located and
# un-escaped it again, a few scans and copies of a text of up to 160,000 characters apiece. A
# pure function of the text the requester read, so the reading is kept per text (the text's
# hash is computed once, then kept by the string). A default-world seed's requesters take ~6
# announcements; the cache is small so that it keeps few texts of past runs alive (a run with
# many more only re-reads).
@functools.lru_cache(maxsize=32)
def shown_block(text: str) -> tuple[int, int, str] | None:
    """The first result block of an announcement as its reader sees it: where its data opens
    (just after the first ``DATA_OPEN``), where the first ``DATA_CLOSE`` starts, and the text
    between them un-escaped; None when the text lacks either marker. (The first close may come
    before the first open in a forged text: then the data is empty.)"""
    opened, close = text.find(DATA_OPEN), text.find(DATA_CLOSE)
    if opened < 0 or close < 0:
        return None
    start = opened + len(DATA_OPEN)
    return start, close, text[start:close].replace("&lt;", "<").replace("&amp;", "&")


def lines_starting(text: str, prefix: str) -> list[str]:
    """The lines of ``text`` that start with ``prefix`` (which holds no line break), in order:
    ``[line for line in text.split("\n") if line.startswith(prefix)]``, found by searching for
    the prefix after a line break instead of cutting out every line (an announcement carries
    its result's lines, thousands in a long one)."""
    assert prefix and "\n" not in prefix
    found: list[str] = []
    head = "\n" + prefix
    if text.startswith(prefix):
        start = 0
    else:
        hit = text.find(head)
        start = -1 if hit < 0 else hit + 1
    while start >= 0:
        end = text.find("\n", start)
        if end < 0:
            found.append(text[start:])
            break
        found.append(text[start:end])
        hit = text.find(head, end)
        start = -1 if hit < 0 else hit + 1
    return found


@functools.lru_cache(maxsize=32)  # read by stats-line and private-handoff-stable
def stats_lines(text: str) -> tuple[str, ...]:
    """The lines of an announcement the requester read that start with ``Stats: `` (FMT-4)."""
    return tuple(lines_starting(text, "Stats: "))


def announces_nothing(result: str | None) -> bool:
    """An exact ANNOUNCE_SKIP reply (surrounding white space aside): delivered by announcing
    nothing (reference §c1)."""
    return result is not None and result.strip() == "ANNOUNCE_SKIP"
