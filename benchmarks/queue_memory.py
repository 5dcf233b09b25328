"""Bytes per queued state: what a state waiting to be expanded costs in memory.

    python benchmarks/queue_memory.py [SCENARIO.toml] [--max-states N]

Explores the scenario breadth-first (the model's own steps and symmetric fingerprints, as the search
does) up to ``--max-states`` distinct states (default 100,000) and, at its widest level, sizes every
object the queued states hold (``sys.getsizeof`` over the states' objects, each counted once however many
states share it, plus the queue's own (state, fingerprint, depth) entries). A successor shares its
unchanged parts with its parent and siblings, so this is the marginal cost per queued state, not the
size of one state on its own. The queue spills past ``checker.search.QUEUE_MEMORY_LIMIT`` states to disk
(:class:`checker.store.SpillQueue`), so this figure times that limit bounds its memory. The last line is
``bytes_per_queued_state=<b> level=<d> queued=<n> distinct=<n>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "benchmarks" / "tlc-comparison.toml"


def deep_size(roots: list[object]) -> int:
    """The bytes of every object reachable from ``roots`` through tuples and dataclass slots, each once
    (small ints, strings and None are shared by the interpreter and left out)."""
    seen: set[int] = set()
    total = 0
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen or obj is None or isinstance(obj, bool | str):
            continue
        if isinstance(obj, int):
            if -5 <= obj <= 256:
                continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, tuple):
            stack.extend(obj)
        elif hasattr(obj, "__slots__"):
            stack.extend(getattr(obj, name) for name in obj.__slots__ if hasattr(obj, name))
    return total


def main(argv: list[str]) -> int:
    cap = int(argv[argv.index("--max-states") + 1]) if "--max-states" in argv else 100_000
    args = [a for i, a in enumerate(argv[1:], 1) if not a.startswith("--") and argv[i - 1] != "--max-states"]
    model = GroupModel(load_scenario(Path(args[0]) if args else DEFAULT).config)
    fp_of = model.symmetric_fingerprint
    seen: set[int] = set()
    level = [(s, fp_of(s)) for s in model.init_states()]
    seen.update(fp for _, fp in level)
    widest, depth, at = level, 0, 0
    while level and len(seen) < cap:
        nxt_level = []
        for state, _ in level:
            for action in model.actions(state):
                nxt = model.next_state(state, action)
                if nxt is None:
                    continue
                fp = fp_of(nxt)
                if fp not in seen:
                    seen.add(fp)
                    nxt_level.append((nxt, fp))
        depth += 1
        level = nxt_level
        if len(level) > len(widest):
            widest, at = level, depth
    entries = [(state, fp, at) for state, fp in widest]
    size = deep_size(list(entries))
    print(f"widest level {at}: {len(entries)} queued states, {size / 2**20:.1f} MiB in all")
    per = size / max(len(entries), 1)
    print(f"bytes_per_queued_state={per:.0f} level={at} queued={len(entries)} distinct={len(seen)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
