"""The delivery actor's Trio shell: the registry core plus its SQLite store.

Every effect the core returns is performed in order, and before each one the hosting process may
die (a crash point named after the effect). What survives is what the store holds; a new
incarnation restores from it.
"""

from __future__ import annotations

from collections.abc import Iterable

from actors import retry
from actors.messages import ChildEnded
from actors.registry import DeliveryCore, Effect, Note, Persist, Send, StartTimer
from actors.requester import requester_actor_name
from actors.runtime import Port
from actors.store import RunStore


async def run_delivery(port: Port, store: RunStore, mutants: frozenset[str]) -> None:
    def jitter() -> float:
        return port.choose("jitter", retry.JITTER_STEPS) / (retry.JITTER_STEPS - 1)

    core = DeliveryCore(port.incarnation, jitter, mutants)
    port.emit("delivery.start", {"incarnation": port.incarnation})
    _perform(port, store, core.restore(store.open_deliveries(), port.now_ms))
    while True:
        message = await port.receive()
        if isinstance(message, ChildEnded):
            effects = core.child_ended(store.get(message.run_id), port.now_ms)
        else:
            effects = core.on_message(message, port.now_ms)
        _perform(port, store, effects)


def _perform(port: Port, store: RunStore, effects: Iterable[Effect]) -> None:
    for effect in effects:
        if isinstance(effect, Note):
            port.emit(effect.kind, effect.data)
        elif isinstance(effect, Persist):
            port.crash_point("before-persist")
            if effect.changes.get("delivery_status") is not None:
                # Name the point after what is about to become durable, for scripted crashes.
                port.crash_point(f"before-record-{effect.changes['delivery_status']}")
            store.update(effect.run_id, effect.changes)
        elif isinstance(effect, Send):
            port.crash_point("before-send")
            port.send(requester_actor_name(effect.requester), effect.completion)
        elif isinstance(effect, StartTimer):
            port.set_timer(effect.delay_ms, effect.payload)
