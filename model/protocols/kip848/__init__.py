"""Kafka's current consumer-group protocol, KIP-848 (``group.protocol=consumer``; scenario
``protocol = "consumer"``): ConsumerGroupHeartbeat, group / assignment / member / partition epochs, and
the coordinator's reconciliation (CurrentAssignmentBuilder). docs/MODEL.md, *KIP-848*, says what is
modelled and what is simplified; docs/KIP848-NOTES.md is the research it follows."""
