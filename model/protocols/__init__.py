"""The built-in protocols, one folder each, and the registry's list of them.

* ``seed/`` — the seed-000 design (scenario ``protocol = "seed"``): its consumer, coordinator, the
  faults of the JoinGroup family, and its action table;
* ``classic/`` — Kafka's classic protocol, JoinGroup + SyncGroup (``eager``, ``cooperative``,
  ``static``), built on the seed design's client and coordinator.

A protocol is registered by its folder's ``table`` module; :data:`BUILT_IN` lists them (the one line a
new built-in protocol adds). A user's own variant needs no entry here (docs/EXTENDING.md).
"""

BUILT_IN = (
    "groupcheck.model.protocols.seed.table",
    "groupcheck.model.protocols.classic.table",
    "groupcheck.model.protocols.kip848.table",
)
