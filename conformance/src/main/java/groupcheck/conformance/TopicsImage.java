package groupcheck.conformance;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataDelta;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The cluster's topics as the group coordinator sees them (its metadata image): what a consumer group
 * subscribes to and the server-side assignors divide. A fixed set of topics, each with a fixed id and
 * partition count and no racks; the scenario's topics, set once per walk by {@code cg_setup}.
 */
final class TopicsImage implements CoordinatorMetadataImage {
    record Topic(String name, Uuid id, int partitionCount) implements TopicMetadata {
        @Override
        public List<String> partitionRacks(int partition) {
            return new ArrayList<>();  // Kafka sorts it (Utils.computeTopicHash)
        }
    }

    private final Map<String, Topic> byName = new LinkedHashMap<>();
    private final Map<Uuid, Topic> byId = new LinkedHashMap<>();

    /** Topic {@code i} of the list gets a fixed id, so a walk's records mean the same after a failover. */
    void add(String name, int partitions) {
        Uuid id = new Uuid(0x67726f7570L, byName.size() + 1L);
        Topic t = new Topic(name, id, partitions);
        byName.put(name, t);
        byId.put(id, t);
    }

    Topic topic(String name) {
        Topic t = byName.get(name);
        if (t == null) {
            throw new IllegalArgumentException("unknown topic " + name);
        }
        return t;
    }

    Topic topic(Uuid id) {
        Topic t = byId.get(id);
        if (t == null) {
            throw new IllegalArgumentException("unknown topic id " + id);
        }
        return t;
    }

    @Override public Set<Uuid> topicIds() { return new LinkedHashSet<>(byId.keySet()); }
    @Override public Set<String> topicNames() { return new LinkedHashSet<>(byName.keySet()); }
    @Override public Optional<TopicMetadata> topicMetadata(String name) { return Optional.ofNullable(byName.get(name)); }
    @Override public Optional<TopicMetadata> topicMetadata(Uuid id) { return Optional.ofNullable(byId.get(id)); }
    @Override public long version() { return 1L; }
    @Override public boolean isEmpty() { return byName.isEmpty(); }

    @Override
    public CoordinatorMetadataDelta emptyDelta() {
        TopicsImage image = this;
        return new CoordinatorMetadataDelta() {
            @Override public Collection<Uuid> createdTopicIds() { return List.of(); }
            @Override public Collection<Uuid> changedTopicIds() { return List.of(); }
            @Override public Set<Uuid> deletedTopicIds() { return Set.of(); }
            @Override public CoordinatorMetadataImage image() { return image; }
        };
    }
}
