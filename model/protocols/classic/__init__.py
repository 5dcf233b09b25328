"""Kafka's classic protocol, JoinGroup + SyncGroup (``group.protocol=classic``): eager, cooperative
and static groups, served by one coordinator (``coordinator``) built on the seed design's; its action
table (``table``) is the seed's with what it changes.
"""
