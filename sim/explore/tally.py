"""What a sweep keeps of its seeds: counts, the failing seeds' outcomes and every seed's run
digest, never every seed's outcome (each is kilobytes: ten million seeds would need tens of
gigabytes). A seed's digest is 8 bytes here, so ``explore --seeds 10000000`` holds 80 MB of
them; ``--check-determinism`` keeps each seed's trace hash besides (about 150 bytes a seed).

Outcomes arrive in seed order (sim/explore/sweeps.py's ``parts``), so a seed is its place in
the sweep and the digest over the sweep is made as they come. A sweep stopped early (Ctrl-C)
has a tally of every seed done so far.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

from actors.probes import PROBES
from sim.explore.seed import SeedOutcome

_DIGEST_BYTES = 8  # a run digest is 16 hex digits (sim/explore/seed.py's run_digest)


class Tally:
    """A sweep of ``seeds`` (a range, in order) so far."""

    def __init__(self, seeds: range, trace_digests: bool = False) -> None:
        self.seeds = seeds
        self.done = 0
        self.failing: list[SeedOutcome] = []  # outcomes with violations, in seed order
        self.chains: dict[int, str] = {}  # a failing branched seed's moment (a guided sweep)
        self.branched = 0  # seeds of a guided sweep that branched from a moment
        self.probes: dict[str, int] = dict.fromkeys(PROBES, 0)  # seeds that hit each probe
        self.invariants: dict[str, int] = {}  # seeds that violated each invariant
        self.fault_seeds: dict[str, int] = {}  # seeds that met each fault kind (the report's rates)
        self.trace_digests: list[tuple[int, str | None]] | None = [] if trace_digests else None
        self._digests = bytearray()
        self._odd: dict[int, str] = {}  # digests that are not 16 hex digits (a crash's "")
        self._hash = hashlib.sha256()

    def add(self, outcome: SeedOutcome, chain: str | None = None) -> None:
        expected = self.seeds[self.done]
        assert outcome.seed == expected, f"seed {outcome.seed} out of order (wanted {expected})"
        self.done += 1
        for name in outcome.probes:
            self.probes[name] += 1
        for name in dict.fromkeys(v.invariant for v in outcome.violations):
            self.invariants[name] = self.invariants.get(name, 0) + 1
        for kind in outcome.faults:
            self.fault_seeds[kind] = self.fault_seeds.get(kind, 0) + 1
        if outcome.violations:
            self.failing.append(outcome)
            if chain:
                self.chains[outcome.seed] = chain
        if chain:
            self.branched += 1
        digest = outcome.run_digest
        self._hash.update(f"{outcome.seed}:{digest}\n".encode())
        try:
            packed = bytes.fromhex(digest) if len(digest) == 2 * _DIGEST_BYTES else b""
        except ValueError:
            packed = b""
        if not packed:
            self._odd[outcome.seed] = digest
            packed = bytes(_DIGEST_BYTES)
        self._digests += packed
        if self.trace_digests is not None:
            self.trace_digests.append((outcome.seed, outcome.digest))

    def add_all(self, outcomes: Sequence[SeedOutcome]) -> None:
        for outcome in outcomes:
            self.add(outcome)

    @property
    def interrupted(self) -> bool:
        return self.done < len(self.seeds)

    def digest(self) -> str:
        """sim/explore/sweeps.py's ``sweep_digest`` over the seeds done."""
        return self._hash.hexdigest()

    def seed_digests(self) -> Iterator[tuple[str, str]]:
        """(seed, run digest) of every seed done, in order (``explore --json``'s
        ``seed_digests``)."""
        for index in range(self.done):
            seed = self.seeds[index]
            odd = self._odd.get(seed)
            yield str(seed), odd if odd is not None else \
                self._digests[index * _DIGEST_BYTES:(index + 1) * _DIGEST_BYTES].hex()
