"""The seed-000 design (../shared/PROTOCOL.md): the consumer (``client``), the coordinator
(``coordinator``), the family's faults (``faults``) and the action table (``table``). Kafka's classic protocol
(:mod:`groupcheck.model.protocols.classic`) builds on its client and coordinator.
"""
