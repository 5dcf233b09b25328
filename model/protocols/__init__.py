"""The protocols' state machines: the seed-000 coordinator (``coordinator``), today's JoinGroup +
SyncGroup coordinator for the eager, cooperative and static protocols (``eager``), and the consumer
(``consumer``)."""
