package groupcheck.conformance;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.errors.CoordinatorLoadInProgressException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocol;
import org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocolCollection;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.CoordinatorExecutor;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.common.runtime.CoordinatorOperationExceptionHelper;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorResult;
import org.apache.kafka.coordinator.common.runtime.CoordinatorTimer;
import org.apache.kafka.coordinator.group.Group;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordHelpers;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.GroupMetadataManager;
import org.apache.kafka.coordinator.group.Utils;
import org.apache.kafka.coordinator.group.classic.ClassicGroup;
import org.apache.kafka.coordinator.group.classic.ClassicGroupMember;
import org.apache.kafka.coordinator.group.classic.ClassicGroupState;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.coordinator.group.modern.MemberState;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroup;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * One consumer group's coordinator, driven as Kafka's own unit tests drive it: Kafka's
 * {@link GroupCoordinatorShard} (its GroupMetadataManager and OffsetMetadataManager) with a mock clock, a
 * mock timer and an in-memory log. No broker, no threads, no network.
 *
 * <p>The harness plays the part of Kafka's CoordinatorRuntime and GroupCoordinatorService around the shard:
 * it replays the records an operation returns (when the operation asks for it), appends them to its log,
 * and completes the operation's append future — at once, except for the group leader's SyncGroup, whose
 * completion (Kafka: the assignment record committed) waits for a {@code commit_writes} event; it turns an
 * operation's exception into the response's error code with Kafka's own
 * {@link CoordinatorOperationExceptionHelper}; while no coordinator is loaded it answers NOT_COORDINATOR, and
 * while one is loading it answers as GroupCoordinatorService does (a heartbeat "blindly" without error,
 * everything else COORDINATOR_LOAD_IN_PROGRESS). Those runtime-level answers are marked {@code "by":
 * "runtime"}; every other response comes from Kafka's coordinator code.
 *
 * <p>A failover ({@code elect}) builds a fresh shard that replays every record the old one wrote, after a
 * serialize/deserialize round trip through Kafka's record serde, as a new coordinator loads
 * {@code __consumer_offsets}; {@code load} then calls {@code onLoaded} (session timers rescheduled).
 */
final class Harness {
    static final String GROUP = "g";
    static final String PROTOCOL_TYPE = ConsumerProtocol.PROTOCOL_TYPE;
    static final int SESSION_TIMEOUT_MS = 45_000;
    static final int REBALANCE_TIMEOUT_MS = 300_000;
    private static final long NO_PRODUCER_ID = -1L;
    private static final short NO_PRODUCER_EPOCH = -1;
    private static final GroupCoordinatorMetrics METRICS = new GroupCoordinatorMetrics();
    private static final GroupCoordinatorRecordSerde SERDE = new GroupCoordinatorRecordSerde();

    /** The coordinator's status as the runtime sees it. */
    private String status = "none";
    private GroupCoordinatorShard shard;
    private GroupMetadataManager groups;
    /** Incremented whenever a coordinator instance is discarded: late completions of its futures are dropped. */
    private int instance;
    private final MockTime time = new MockTime();
    private MockTimer timer;
    /** The log: every record written, serialized (key, value), in order. */
    private final List<byte[][]> log = new ArrayList<>();
    private final List<CompletableFuture<Void>> deferredAppends = new ArrayList<>();
    private final List<Map<String, Object>> outbox = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final GroupCoordinatorConfig config;
    private final GroupConfigManager groupConfigManager;
    /** The topics a consumer group sees (cg_setup); null: none (classic groups need no metadata). */
    private TopicsImage image;
    /** The server-side assignor consumer-group members ask for (ConsumerGroupHeartbeat's ServerAssignor). */
    private String cgAssignor = "uniform";

    Harness() {
        Map<String, Object> props = new HashMap<>();
        // consumer groups (KIP-848): the target assignment is computed inside the heartbeat that bumps the
        // group epoch, never deferred to a later one (4.3's default interval is 1 s)
        props.put(GroupCoordinatorConfig.CONSUMER_GROUP_ASSIGNMENT_INTERVAL_MS_CONFIG, 0);
        config = GroupCoordinatorConfig.fromProps(props);
        groupConfigManager = new GroupConfigManager(Map.of(), config, ShareGroupConfig.fromProps(props));
    }

    // ---------------------------------------------------------------------------------------------- steps

    /** Run one step's events; return the responses completed during them and the state afterwards. */
    @SuppressWarnings("unchecked")
    Map<String, Object> step(List<Object> events) {
        List<Object> infos = new ArrayList<>();
        for (Object e : events) {
            Map<String, Object> ev = (Map<String, Object>) e;
            Map<String, Object> info = new LinkedHashMap<>();
            info.put("op", ev.get("op"));
            try {
                event(ev, info);
            } catch (RuntimeException ex) {
                info.put("harness_error", ex.toString());
                info.put("at", where(ex));
            }
            infos.add(info);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("events", infos);
        out.put("responses", new ArrayList<>(outbox));
        outbox.clear();
        out.put("state", state());
        if (!notes.isEmpty()) {
            out.put("notes", new ArrayList<>(notes));
            notes.clear();
        }
        return out;
    }

    private void event(Map<String, Object> ev, Map<String, Object> info) {
        String op = (String) ev.get("op");
        switch (op) {
            case "reset": reset(); break;
            case "bootstrap": bootstrap(ev, info); break;
            case "join": join(ev, info); break;
            case "sync": sync(ev); break;
            case "heartbeat": heartbeat(ev); break;
            case "leave": leave(ev); break;
            case "commit": commit(ev); break;
            case "fetch": fetch(ev); break;
            case "expire": fire(MockTimer.heartbeatKey(GROUP, str(ev, "member")), info); break;
            case "complete_join": completeJoin(info); break;
            case "sync_timeout": fire(MockTimer.syncKey(GROUP), info); break;
            case "commit_writes": commitWrites(info); break;
            case "prepare_rebalance": prepareRebalance(str(ev, "reason"), info); break;
            case "crash": discard(false); status = "none"; break;
            case "unload": discard(true); status = "none"; break;
            case "elect": elect(info); break;
            case "load": load(); break;
            case "cg_setup": cgSetup(ev); break;
            case "cg_bootstrap": cgBootstrap(ev); break;
            case "cg_heartbeat": cgHeartbeat(ev, info); break;
            case "cg_commit": cgCommit(ev); break;
            case "cg_session_timeout":
                fire(GroupMetadataManager.groupSessionTimeoutKey(GROUP, str(ev, "member")), info);
                break;
            case "cg_rebalance_timeout":
                fire(GroupMetadataManager.groupRebalanceTimeoutKey(GROUP, str(ev, "member")), info);
                break;
            default: throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private void reset() {
        if (shard != null) {
            discard(false);
        }
        log.clear();
        deferredAppends.clear();
        outbox.clear();
        time.setMs(0);
        image = null;
        cgAssignor = "uniform";
        elect(new LinkedHashMap<>());
        load();
    }

    // -------------------------------------------------------------------------------- coordinator life

    private void elect(Map<String, Object> info) {
        if (shard != null) {
            discard(false);
        }
        instance++;
        SnapshotRegistry snapshots = new SnapshotRegistry(new LogContext());
        timer = new MockTimer(time);
        shard = (GroupCoordinatorShard) new GroupCoordinatorShard.Builder(config, groupConfigManager)
            .withAuthorizerPlugin(Optional.empty())
            .withLogContext(new LogContext())
            .withSnapshotRegistry(snapshots)
            .withTime(time)
            .withTimer(timer)
            .withExecutor(new IdleExecutor())
            .withCoordinatorMetrics(METRICS)
            .withTopicPartition(new TopicPartition("__consumer_offsets", 0))
            .build();
        groups = groupMetadataManager(shard);
        long offset = 0;
        for (byte[][] rec : log) {
            CoordinatorRecord record = SERDE.deserialize(
                ByteBuffer.wrap(rec[0]), rec[1] == null ? null : ByteBuffer.wrap(rec[1]));
            shard.replay(offset++, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, record);
        }
        info.put("records_loaded", log.size());
        status = "loading";
    }

    private void load() {
        shard.onLoaded(image != null ? image : CoordinatorMetadataImage.EMPTY);
        status = "serving";
    }

    /** The coordinator goes away: unloaded (its held requests answered NOT_COORDINATOR, as Kafka's
     *  onUnloaded does) or crashed (whatever it held is lost with it). */
    private void discard(boolean unload) {
        if (shard == null) {
            return;
        }
        if (!unload) {
            instance++;  // a crashed broker sends nothing more
        }
        deferredAppends.clear();  // pending writes fail; their callbacks find the group Dead and do nothing
        shard.onUnloaded();
        instance++;
        shard = null;
        groups = null;
        timer = null;
    }

    private static GroupMetadataManager groupMetadataManager(GroupCoordinatorShard shard) {
        try {
            Field f = GroupCoordinatorShard.class.getDeclaredField("groupMetadataManager");
            f.setAccessible(true);
            return (GroupMetadataManager) f.get(shard);
        } catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("cannot read the shard's GroupMetadataManager", ex);
        }
    }

    /**
     * The initial state of a scenario that starts with a stable group: a group record as the coordinator
     * that formed generation {@code generation} would have written it, replayed by a fresh coordinator.
     * Member ids are made as Kafka makes them (client id + UUID); they are returned in member order.
     */
    @SuppressWarnings("unchecked")
    private void bootstrap(Map<String, Object> ev, Map<String, Object> info) {
        List<Object> members = (List<Object>) ev.get("members");
        int leaderIndex = ((Number) ev.get("leader")).intValue();
        String protocol = str(ev, "protocol");
        List<String> ids = new ArrayList<>();
        ClassicGroup tmp = new ClassicGroup(new LogContext(), GROUP, ClassicGroupState.EMPTY, time);
        for (Object m : members) {
            Map<String, Object> mm = (Map<String, Object>) m;
            Optional<String> instanceId = Optional.ofNullable((String) mm.get("instance"));
            ids.add(tmp.generateMemberId(str(mm, "client"), instanceId));
        }
        ClassicGroup group = new ClassicGroup(new LogContext(), GROUP, ClassicGroupState.STABLE, time,
            ((Number) ev.get("generation")).intValue(), Optional.of(PROTOCOL_TYPE), Optional.of(protocol),
            Optional.of(ids.get(leaderIndex)), Optional.of(time.milliseconds()));
        Map<String, byte[]> assignment = new HashMap<>();
        for (int i = 0; i < members.size(); i++) {
            Map<String, Object> mm = (Map<String, Object>) members.get(i);
            ClassicGroupMember member = new ClassicGroupMember(ids.get(i),
                Optional.ofNullable((String) mm.get("instance")), str(mm, "client"), "/127.0.0.1",
                REBALANCE_TIMEOUT_MS, SESSION_TIMEOUT_MS, PROTOCOL_TYPE,
                protocols(protocol, (Map<String, Object>) mm.get("subscription")));
            group.add(member);
            assignment.put(ids.get(i), assignmentBytes((List<Object>) mm.get("assignment")));
        }
        write(GroupCoordinatorRecordHelpers.newGroupMetadataRecord(group, assignment));
        elect(new LinkedHashMap<>());
        load();
        info.put("members", ids);
    }

    // ------------------------------------------------------------------------------------------ requests

    private static final class Ctx implements AuthorizableRequestContext {
        private final ApiKeys api;
        private final String clientId;
        private final short version;

        Ctx(ApiKeys api, String clientId) {
            this(api, clientId, version(api));
        }

        Ctx(ApiKeys api, String clientId, short version) {
            this.api = api;
            this.clientId = clientId;
            this.version = version;
        }

        @Override public String listenerName() { return ListenerName.forSecurityProtocol(SecurityProtocol.PLAINTEXT).value(); }
        @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.PLAINTEXT; }
        @Override public KafkaPrincipal principal() { return KafkaPrincipal.ANONYMOUS; }
        @Override public InetAddress clientAddress() { return InetAddress.getLoopbackAddress(); }
        @Override public int requestType() { return api.id; }
        @Override public int requestVersion() { return version; }
        @Override public String clientId() { return clientId; }
        @Override public int correlationId() { return 0; }
    }

    /** The request versions a Kafka 3.x/4.x Java consumer sends (OffsetCommit/OffsetFetch by topic name). */
    static short version(ApiKeys api) {
        switch (api) {
            case OFFSET_COMMIT:
            case OFFSET_FETCH:
                return 9;
            default:
                return api.latestVersion();
        }
    }

    /** Where a response goes: to consumer {@code c}, tagged as the request was. */
    private Map<String, Object> response(Map<String, Object> ev, String api) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("c", ev.get("c"));
        r.put("tag", ev.get("tag"));
        r.put("api", api);
        return r;
    }

    private void send(Map<String, Object> r) {
        outbox.add(r);
    }

    /** The runtime's answer when no coordinator is serving; null when the shard is to handle it. */
    private Errors unavailable() {
        if ("none".equals(status)) {
            return Errors.NOT_COORDINATOR;
        }
        if ("loading".equals(status)) {
            return Errors.COORDINATOR_LOAD_IN_PROGRESS;
        }
        return null;
    }

    /**
     * Kafka's own mapping of an operation's exception to the response's error
     * ({@link CoordinatorOperationExceptionHelper#handleOperationException}). Called reflectively only
     * because its last parameter is an SLF4J logger, which the harness would otherwise have to compile
     * against (a second version to pin).
     */
    @SuppressWarnings("unchecked")
    private <T> T mapped(String op, Object input, Throwable ex, BiFunction<Errors, String, T> handler) {
        try {
            if (HANDLE == null) {
                Class<?> logger = Class.forName("org.slf4j.Logger");
                HANDLE = CoordinatorOperationExceptionHelper.class.getMethod("handleOperationException",
                    String.class, Object.class, Throwable.class, BiFunction.class, logger);
                LOGGER = LogContext.class.getMethod("logger", Class.class).invoke(new LogContext(), Harness.class);
            }
            return (T) HANDLE.invoke(null, op, input, ex, handler, LOGGER);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot map " + ex, e);
        }
    }

    private static Method HANDLE;
    private static Object LOGGER;

    private static Throwable runtimeException(Errors error) {
        return error == Errors.NOT_COORDINATOR
            ? new NotCoordinatorException("not the coordinator")
            : new CoordinatorLoadInProgressException("loading");
    }

    @SuppressWarnings("unchecked")
    private void join(Map<String, Object> ev, Map<String, Object> info) {
        String instanceId = (String) ev.get("instance");
        String protocol = str(ev, "protocol");
        JoinGroupRequestData request = new JoinGroupRequestData()
            .setGroupId(GROUP)
            .setMemberId(str(ev, "member"))
            .setGroupInstanceId(instanceId)
            .setProtocolType(PROTOCOL_TYPE)
            .setSessionTimeoutMs(SESSION_TIMEOUT_MS)
            .setRebalanceTimeoutMs(REBALANCE_TIMEOUT_MS)
            .setReason("groupcheck")
            .setProtocols(protocols(protocol, (Map<String, Object>) ev.get("subscription")));
        Errors down = unavailable();
        if (down != null) {
            JoinGroupResponseData resp = mapped("classic-group-join", request, runtimeException(down),
                (error, msg) -> new JoinGroupResponseData().setErrorCode(error.code()));
            send(joinResponse(response(ev, "JoinGroup"), resp, "runtime"));
            return;
        }
        Ctx ctx = new Ctx(ApiKeys.JOIN_GROUP, str(ev, "client"));
        JoinGroupResponseData first = null;
        if (request.memberId().isEmpty() && instanceId == null) {
            // KIP-394: JoinGroup v4+ without a member id is answered MEMBER_ID_REQUIRED with the id to use;
            // the Java client rejoins at once with it. The harness makes that round trip inside the one
            // JoinGroup the model sends.
            CompletableFuture<JoinGroupResponseData> f = new CompletableFuture<>();
            runWrite(() -> shard.classicGroupJoin(ctx, request, f), false,
                ex -> f.complete(mapped("classic-group-join", request, ex,
                    (error, msg) -> new JoinGroupResponseData().setErrorCode(error.code()))));
            first = f.getNow(null);
            if (first != null && first.errorCode() == Errors.MEMBER_ID_REQUIRED.code()) {
                info.put("member_id_required", first.memberId());
                request.setMemberId(first.memberId());
                first = null;
            }
        }
        Map<String, Object> r = response(ev, "JoinGroup");
        int inst = instance;
        if (first != null) {
            send(joinResponse(r, first, "coordinator"));
            return;
        }
        CompletableFuture<JoinGroupResponseData> f = new CompletableFuture<>();
        f.whenComplete((resp, ex) -> {
            if (inst == instance) {
                send(joinResponse(r, resp, "coordinator"));
            }
        });
        runWrite(() -> shard.classicGroupJoin(ctx, request, f), false,
            ex -> f.complete(mapped("classic-group-join", request, ex,
                (error, msg) -> new JoinGroupResponseData().setErrorCode(error.code()))));
    }

    @SuppressWarnings("unchecked")
    private void sync(Map<String, Object> ev) {
        SyncGroupRequestData request = new SyncGroupRequestData()
            .setGroupId(GROUP)
            .setMemberId(str(ev, "member"))
            .setGroupInstanceId((String) ev.get("instance"))
            .setGenerationId(((Number) ev.get("generation")).intValue())
            .setProtocolType(PROTOCOL_TYPE)
            .setProtocolName(str(ev, "protocol"));
        List<SyncGroupRequestData.SyncGroupRequestAssignment> assignments = new ArrayList<>();
        for (Object a : (List<Object>) ev.getOrDefault("assignments", List.of())) {
            Map<String, Object> am = (Map<String, Object>) a;
            assignments.add(new SyncGroupRequestData.SyncGroupRequestAssignment()
                .setMemberId(str(am, "member"))
                .setAssignment(assignmentBytes((List<Object>) am.get("partitions"))));
        }
        request.setAssignments(assignments);
        Map<String, Object> r = response(ev, "SyncGroup");
        Errors down = unavailable();
        if (down != null) {
            SyncGroupResponseData resp = mapped("classic-group-sync", request, runtimeException(down),
                (error, msg) -> new SyncGroupResponseData().setErrorCode(error.code()));
            send(syncResponse(r, resp, "runtime"));
            return;
        }
        Ctx ctx = new Ctx(ApiKeys.SYNC_GROUP, str(ev, "client"));
        CompletableFuture<SyncGroupResponseData> f = new CompletableFuture<>();
        int inst = instance;
        f.whenComplete((resp, ex) -> {
            if (inst == instance) {
                send(syncResponse(r, resp, "coordinator"));
            }
        });
        // the leader's assignment is written to the log; it is answered when the write commits
        runWrite(() -> shard.classicGroupSync(ctx, request, f), true,
            ex -> f.complete(mapped("classic-group-sync", request, ex,
                (error, msg) -> new SyncGroupResponseData().setErrorCode(error.code()))));
    }

    private void heartbeat(Map<String, Object> ev) {
        HeartbeatRequestData request = new HeartbeatRequestData()
            .setGroupId(GROUP)
            .setMemberId(str(ev, "member"))
            .setGroupInstanceId((String) ev.get("instance"))
            .setGenerationId(((Number) ev.get("generation")).intValue());
        Map<String, Object> r = response(ev, "Heartbeat");
        // GroupCoordinatorService#heartbeat: a group still loading is answered "blindly" without error
        BiFunction<Errors, String, HeartbeatResponseData> handler = (error, msg) ->
            new HeartbeatResponseData().setErrorCode(
                error == Errors.COORDINATOR_LOAD_IN_PROGRESS ? Errors.NONE.code() : error.code());
        Errors down = unavailable();
        HeartbeatResponseData resp;
        String by = "coordinator";
        if (down != null) {
            resp = mapped("classic-group-heartbeat", request, runtimeException(down), handler);
            by = "runtime";
        } else {
            Ctx ctx = new Ctx(ApiKeys.HEARTBEAT, str(ev, "client"));
            HeartbeatResponseData[] out = new HeartbeatResponseData[1];
            runWrite(() -> {
                CoordinatorResult<HeartbeatResponseData, CoordinatorRecord> res = shard.classicGroupHeartbeat(ctx, request);
                out[0] = res.response();
                return res;
            }, false, ex -> out[0] = mapped("classic-group-heartbeat", request, ex, handler));
            resp = out[0];
        }
        r.put("error", Errors.forCode(resp.errorCode()).name());
        r.put("by", by);
        send(r);
    }

    private void leave(Map<String, Object> ev) {
        LeaveGroupRequestData request = new LeaveGroupRequestData()
            .setGroupId(GROUP)
            .setMembers(List.of(new LeaveGroupRequestData.MemberIdentity()
                .setMemberId(str(ev, "member"))
                .setGroupInstanceId((String) ev.get("instance"))
                .setReason("groupcheck")));
        Map<String, Object> r = response(ev, "LeaveGroup");
        Errors down = unavailable();
        BiFunction<Errors, String, LeaveGroupResponseData> handler = (error, msg) ->
            new LeaveGroupResponseData().setErrorCode(error.code());
        LeaveGroupResponseData resp;
        String by = "coordinator";
        if (down != null) {
            resp = mapped("classic-group-leave", request, runtimeException(down), handler);
            by = "runtime";
        } else {
            Ctx ctx = new Ctx(ApiKeys.LEAVE_GROUP, str(ev, "client"));
            LeaveGroupResponseData[] out = new LeaveGroupResponseData[1];
            runWrite(() -> {
                CoordinatorResult<LeaveGroupResponseData, CoordinatorRecord> res = shard.classicGroupLeave(ctx, request);
                out[0] = res.response();
                return res;
            }, false, ex -> out[0] = mapped("classic-group-leave", request, ex, handler));
            resp = out[0];
        }
        Errors error = Errors.forCode(resp.errorCode());
        if (error == Errors.NONE) {
            for (LeaveGroupResponseData.MemberResponse m : resp.members()) {
                if (m.errorCode() != Errors.NONE.code()) {
                    error = Errors.forCode(m.errorCode());
                }
            }
        }
        r.put("error", error.name());
        r.put("by", by);
        send(r);
    }

    @SuppressWarnings("unchecked")
    private void commit(Map<String, Object> ev) {
        Map<String, OffsetCommitRequestData.OffsetCommitRequestTopic> topics = new TreeMap<>();
        for (Object o : (List<Object>) ev.get("offsets")) {
            List<Object> t = (List<Object>) o;
            String topic = (String) t.get(0);
            topics.computeIfAbsent(topic, n -> new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(n))
                .partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(((Number) t.get(1)).intValue())
                    .setCommittedOffset(((Number) t.get(2)).longValue()));
        }
        OffsetCommitRequestData request = new OffsetCommitRequestData()
            .setGroupId(GROUP)
            .setMemberId(str(ev, "member"))
            .setGroupInstanceId((String) ev.get("instance"))
            .setGenerationIdOrMemberEpoch(((Number) ev.get("generation")).intValue())
            .setTopics(new ArrayList<>(topics.values()));
        Map<String, Object> r = response(ev, "OffsetCommit");
        Errors down = unavailable();
        Errors error = Errors.NONE;
        String by = "coordinator";
        if (down != null) {
            error = mapped("commit-offset", request, runtimeException(down), (e, msg) -> e);
            by = "runtime";
        } else {
            Ctx ctx = new Ctx(ApiKeys.OFFSET_COMMIT, str(ev, "client"));
            Errors[] out = new Errors[] {Errors.NONE};
            runWrite(() -> {
                CoordinatorResult<OffsetCommitResponseData, CoordinatorRecord> res = shard.commitOffset(ctx, request);
                for (OffsetCommitResponseData.OffsetCommitResponseTopic t : res.response().topics()) {
                    for (OffsetCommitResponseData.OffsetCommitResponsePartition p : t.partitions()) {
                        if (p.errorCode() != Errors.NONE.code()) {
                            out[0] = Errors.forCode(p.errorCode());
                        }
                    }
                }
                return res;
            }, false, ex -> out[0] = mapped("commit-offset", request, ex, (e, msg) -> e));
            error = out[0];
        }
        r.put("error", error.name());
        r.put("by", by);
        send(r);
    }

    /** OffsetFetch of the given partitions: what a consumer reads after it is assigned them. */
    @SuppressWarnings("unchecked")
    private void fetch(Map<String, Object> ev) {
        Map<String, OffsetFetchRequestData.OffsetFetchRequestTopics> topics = new TreeMap<>();
        for (Object o : (List<Object>) ev.get("partitions")) {
            List<Object> t = (List<Object>) o;
            topics.computeIfAbsent((String) t.get(0),
                n -> new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(n))
                .partitionIndexes().add(((Number) t.get(1)).intValue());
        }
        OffsetFetchRequestData.OffsetFetchRequestGroup request = new OffsetFetchRequestData.OffsetFetchRequestGroup()
            .setGroupId(GROUP)
            .setTopics(new ArrayList<>(topics.values()));
        Map<String, Object> r = response(ev, "OffsetFetch");
        Errors down = unavailable();
        List<Object> offsets = new ArrayList<>();
        String error = "NONE";
        String by = "coordinator";
        if (down != null) {
            error = down.name();
            by = "runtime";
        } else {
            try {
                OffsetFetchResponseData.OffsetFetchResponseGroup resp = shard.fetchOffsets(request, Long.MAX_VALUE);
                if (resp.errorCode() != Errors.NONE.code()) {
                    error = Errors.forCode(resp.errorCode()).name();
                }
                for (OffsetFetchResponseData.OffsetFetchResponseTopics t : resp.topics()) {
                    for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                        offsets.add(List.of(t.name(), p.partitionIndex(), p.committedOffset()));
                    }
                }
            } catch (RuntimeException ex) {
                error = mapped("fetch-offsets", request, ex, (e, msg) -> e).name();
            }
        }
        r.put("error", error);
        r.put("offsets", offsets);
        r.put("by", by);
        send(r);
    }

    interface Op {
        CoordinatorResult<?, CoordinatorRecord> run();
    }

    interface OnError {
        void accept(Throwable ex);
    }

    /**
     * What CoordinatorRuntime does with a write operation: run it; replay its records when it asks for
     * that; append them to the log; complete its append future (the records are committed) — unless
     * {@code defer} and the operation wrote something, in which case the future waits for
     * {@code commit_writes}. An exception fails the operation (the request's response carries its error).
     */
    private void runWrite(Op op, boolean defer, OnError onError) {
        CoordinatorResult<?, CoordinatorRecord> result;
        try {
            result = op.run();
        } catch (RuntimeException ex) {
            onError.accept(ex);
            return;
        }
        apply(result, defer);
    }

    private void apply(CoordinatorResult<?, CoordinatorRecord> result, boolean defer) {
        for (CoordinatorRecord record : result.records()) {
            if (result.replayRecords()) {
                shard.replay(log.size(), NO_PRODUCER_ID, NO_PRODUCER_EPOCH, record);
            }
            write(record);
        }
        CompletableFuture<Void> append = result.appendFuture();
        if (append != null) {
            if (defer && !result.records().isEmpty()) {
                deferredAppends.add(append);
            } else {
                append.complete(null);
            }
        }
    }

    private void write(CoordinatorRecord record) {
        log.add(new byte[][] {SERDE.serializeKey(record), SERDE.serializeValue(record)});
    }

    private void commitWrites(Map<String, Object> info) {
        List<CompletableFuture<Void>> pending = new ArrayList<>(deferredAppends);
        deferredAppends.clear();
        for (CompletableFuture<Void> f : pending) {
            f.complete(null);
        }
        info.put("committed", pending.size());
    }

    // -------------------------------------------------------------------------------------------- timers

    /** Fire one timer now (its deadline becomes the time); false when nothing is scheduled under key. */
    private boolean fire(String key, Map<String, Object> info) {
        if (timer == null) {
            info.put("fired", false);
            return false;
        }
        MockTimer.Task task = timer.take(key);
        info.put("fired", task != null);
        if (task == null) {
            return false;
        }
        time.setMs(Math.max(time.milliseconds(), task.deadlineMs));
        CoordinatorResult<Void, CoordinatorRecord> result;
        try {
            result = task.operation.generateRecords();
        } catch (RuntimeException ex) {
            notes.add("timer " + key + " failed: " + ex);
            return true;
        }
        apply(result, false);
        return true;
    }

    /**
     * The join phase's timer fires until the group leaves PreparingRebalance: the initial-rebalance delay
     * (extended while new members keep arriving, KIP-134) or the rebalance timeout.
     */
    private void completeJoin(Map<String, Object> info) {
        int fired = 0;
        while (fired < 100 && groups != null) {
            ClassicGroup group = classicGroup();
            if (group == null || group.currentState() != ClassicGroupState.PREPARING_REBALANCE) {
                break;
            }
            if (!fire(MockTimer.joinKey(GROUP), new LinkedHashMap<>())) {
                break;
            }
            fired++;
        }
        info.put("fired", fired);
    }

    /**
     * A rebalance whose cause Kafka's coordinator does not see itself (a topic gained partitions: in Kafka
     * the leader consumer notices and rejoins): Kafka's own GroupMetadataManager#prepareRebalance is called.
     */
    private void prepareRebalance(String reason, Map<String, Object> info) {
        ClassicGroup group = classicGroup();
        if (group == null || !group.canRebalance()) {
            info.put("prepared", false);
            return;
        }
        try {
            Method m = GroupMetadataManager.class.getDeclaredMethod("prepareRebalance", ClassicGroup.class, String.class);
            m.setAccessible(true);
            @SuppressWarnings("unchecked")
            CoordinatorResult<Void, CoordinatorRecord> result =
                (CoordinatorResult<Void, CoordinatorRecord>) m.invoke(groups, group, reason);
            apply(result, false);
            info.put("prepared", true);
        } catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("cannot call prepareRebalance", ex);
        }
    }

    // --------------------------------------------------------------------------------------------- state

    private ClassicGroup classicGroup() {
        if (groups == null) {
            return null;
        }
        try {
            Group g = groups.group(GROUP);
            return g instanceof ClassicGroup ? (ClassicGroup) g : null;
        } catch (RuntimeException ex) {
            return null;
        }
    }

    private Map<String, Object> state() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("coordinator", status);
        s.put("time_ms", time.milliseconds());
        s.put("log_records", log.size());
        if (image != null) {
            return consumerState(s);
        }
        ClassicGroup group = classicGroup();
        if (group == null) {
            s.put("group", null);
            return s;
        }
        s.put("group", group.currentState().toString());
        s.put("generation", group.generationId());
        s.put("leader", group.leaderOrNull());
        s.put("protocol", group.protocolName().orElse(null));
        List<Object> members = new ArrayList<>();
        List<ClassicGroupMember> sorted = new ArrayList<>(group.allMembers());
        sorted.sort(Comparator.comparing(ClassicGroupMember::memberId));
        for (ClassicGroupMember m : sorted) {
            Map<String, Object> mm = new LinkedHashMap<>();
            mm.put("member", m.memberId());
            mm.put("instance", m.groupInstanceId().orElse(null));
            mm.put("client", m.clientId());
            mm.put("awaiting_join", m.isAwaitingJoin());
            mm.put("awaiting_sync", m.isAwaitingSync());
            mm.put("assignment", partitions(m.assignment()));
            mm.put("session_timer", timer != null && timer.isScheduled(MockTimer.heartbeatKey(GROUP, m.memberId())));
            members.add(mm);
        }
        s.put("members", members);
        s.put("timers", timer == null ? List.of() : timer.keys());
        return s;
    }

    // ------------------------------------------------------------------------ consumer groups (KIP-848)

    /**
     * A walk of the consumer protocol: the scenario's topics (each {@code [name, partitions]}) become the
     * coordinator's metadata image and {@code assignor} the server-side assignor members ask for; the
     * coordinator is then elected afresh over the (empty) log and loaded with that image.
     */
    @SuppressWarnings("unchecked")
    private void cgSetup(Map<String, Object> ev) {
        image = new TopicsImage();
        for (Object o : (List<Object>) ev.get("topics")) {
            List<Object> t = (List<Object>) o;
            image.add((String) t.get(0), ((Number) t.get(1)).intValue());
        }
        cgAssignor = str(ev, "assignor");
        elect(new LinkedHashMap<>());
        load();
    }

    /**
     * The initial state of a scenario whose consumer group starts formed: the records a coordinator that
     * formed it would have written (each member's subscription, the group epoch with the subscribed
     * topics' metadata hash as Kafka computes it, the target assignment and its epoch, each member's
     * current assignment), replayed by a fresh coordinator as after a failover.
     */
    @SuppressWarnings("unchecked")
    private void cgBootstrap(Map<String, Object> ev) {
        List<String> topics = new ArrayList<>(image.topicNames());
        Map<String, Long> hashes = new TreeMap<>();
        for (String t : topics) {
            hashes.put(t, Utils.computeTopicHash(t, image));
        }
        List<ConsumerGroupMember> members = new ArrayList<>();
        List<Object> targets = new ArrayList<>();
        for (Object o : (List<Object>) ev.get("members")) {
            Map<String, Object> m = (Map<String, Object>) o;
            int epoch = ((Number) m.get("epoch")).intValue();
            // KIP-1251's assignment epochs ("topic-p" -> epoch) when the walk keeps them, else the member's epoch
            Map<String, Object> since = (Map<String, Object>) m.getOrDefault("assignment_epochs", Map.of());
            members.add(new ConsumerGroupMember.Builder(str(m, "member"))
                .setMemberEpoch(epoch)
                .setPreviousMemberEpoch(((Number) m.get("prev")).intValue())
                .setState(MemberState.valueOf(str(m, "state")))
                .setAssignedPartitions(epochs((List<Object>) m.get("assigned"), epoch, since))
                .setPartitionsPendingRevocation(epochs((List<Object>) m.get("pending"), epoch, since))
                .setSubscribedTopicNames(topics)
                .setRebalanceTimeoutMs(REBALANCE_TIMEOUT_MS)
                .setClientId(str(m, "client"))
                .setInstanceId((String) m.get("instance"))
                .setClientHost(InetAddress.getLoopbackAddress().toString())
                .setServerAssignorName(cgAssignor)
                .build());
            targets.add(m.get("target"));
        }
        for (ConsumerGroupMember m : members) {
            write(GroupCoordinatorRecordHelpers.newConsumerGroupMemberSubscriptionRecord(GROUP, m));
        }
        write(GroupCoordinatorRecordHelpers.newConsumerGroupEpochRecord(
            GROUP, ((Number) ev.get("group_epoch")).intValue(), Utils.computeGroupHash(hashes)));
        for (int i = 0; i < members.size(); i++) {
            write(GroupCoordinatorRecordHelpers.newConsumerGroupTargetAssignmentRecord(
                GROUP, members.get(i).memberId(), byTopic((List<Object>) targets.get(i))));
        }
        write(GroupCoordinatorRecordHelpers.newConsumerGroupTargetAssignmentMetadataRecord(
            GROUP, ((Number) ev.get("assignment_epoch")).intValue(), time.milliseconds()));
        for (ConsumerGroupMember m : members) {
            write(GroupCoordinatorRecordHelpers.newConsumerGroupCurrentAssignmentRecord(GROUP, m));
        }
        elect(new LinkedHashMap<>());
        load();
    }

    /**
     * One ConsumerGroupHeartbeat, as the Java consumer sends it: {@code epoch} 0 to join, -1 to leave, -2 for a
     * static member to leave for a while; {@code instance} its group.instance.id (null: a dynamic member);
     * {@code full} (and every join) carries every field (rebalance timeout, subscription: {@code topics},
     * else every topic; server assignor); {@code owned} the owned partitions, or null when the field is
     * left out; {@code elsewhere}: the broker is not the coordinator (NOT_COORDINATOR). The
     * response goes out once the operation's records are written. An exception of the coordinator that is
     * not an API error (an IllegalStateException of the partition epochs, say) is reported as such.
     */
    @SuppressWarnings("unchecked")
    private void cgHeartbeat(Map<String, Object> ev, Map<String, Object> info) {
        int epoch = ((Number) ev.get("epoch")).intValue();
        boolean full = epoch == 0 || (epoch > 0 && Boolean.TRUE.equals(ev.get("full")));
        Object owned = ev.get("owned");
        ConsumerGroupHeartbeatRequestData request = new ConsumerGroupHeartbeatRequestData()
            .setGroupId(GROUP)
            .setMemberId(str(ev, "member"))
            .setMemberEpoch(epoch)
            .setInstanceId((String) ev.get("instance"))
            .setRackId(null)
            .setRebalanceTimeoutMs(full ? REBALANCE_TIMEOUT_MS : -1)
            .setSubscribedTopicNames(full ? subscription(ev) : null)
            .setSubscribedTopicRegex(null)
            .setServerAssignor(full ? cgAssignor : null)
            .setTopicPartitions(owned == null ? null : requestPartitions((List<Object>) owned));
        Map<String, Object> r = response(ev, "ConsumerGroupHeartbeat");
        // "elsewhere": the request reached a broker that does not host the group's partition (its
        // coordinator is another broker), whose runtime answers NOT_COORDINATOR
        Errors down = Boolean.TRUE.equals(ev.get("elsewhere")) ? Errors.NOT_COORDINATOR : unavailable();
        if (down != null) {
            send(cgResponse(r, cgError(request, runtimeException(down)), "runtime"));
            return;
        }
        Ctx ctx = new Ctx(ApiKeys.CONSUMER_GROUP_HEARTBEAT, str(ev, "client"));
        CoordinatorResult<ConsumerGroupHeartbeatResponseData, CoordinatorRecord> result;
        try {
            result = shard.consumerGroupHeartbeat(ctx, request);
            apply(result, false);  // replaying the records can throw too (the partition epochs)
        } catch (RuntimeException ex) {
            if (!(ex instanceof ApiException)) {
                r.put("exception", ex.toString());
                r.put("at", where(ex));
                notes.add("ConsumerGroupHeartbeat of " + request.memberId() + " threw " + ex);
            }
            send(cgResponse(r, cgError(request, ex), "coordinator"));
            return;
        }
        send(cgResponse(r, result.response(), "coordinator"));
    }

    /**
     * One OffsetCommit of a consumer-group member, as the 4.3.1 Java consumer sends it once it knows the
     * topics' ids ({@code version} 10, by topic id; 9: by name alone, as it does otherwise): {@code member}, {@code epoch} (generationIdOrMemberEpoch), {@code partitions} (each
     * {@code [topic, partition]}), all at {@code offset}; {@code elsewhere} as for a heartbeat. The
     * response carries the error of every partition ({@code errors}: {@code [topic, partition, error]}) and
     * {@code error}, the first that is not NONE (else NONE). An exception that is no API error is reported
     * as for a heartbeat.
     */
    @SuppressWarnings("unchecked")
    private void cgCommit(Map<String, Object> ev) {
        long offset = ((Number) ev.get("offset")).longValue();
        short version = ((Number) ev.getOrDefault("version", 10)).shortValue();
        Map<String, OffsetCommitRequestData.OffsetCommitRequestTopic> topics = new TreeMap<>();
        for (Object o : (List<Object>) ev.get("partitions")) {
            List<Object> t = (List<Object>) o;
            // version 10 carries the topic id (KafkaApis resolves the name from it); 9 the name alone
            topics.computeIfAbsent((String) t.get(0), n -> new OffsetCommitRequestData.OffsetCommitRequestTopic()
                    .setName(n)
                    .setTopicId(version >= 10 ? image.topic(n).id() : Uuid.ZERO_UUID))
                .partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(((Number) t.get(1)).intValue())
                    .setCommittedOffset(offset));
        }
        OffsetCommitRequestData request = new OffsetCommitRequestData()
            .setGroupId(GROUP)
            .setMemberId(str(ev, "member"))
            .setGroupInstanceId(null)
            .setGenerationIdOrMemberEpoch(((Number) ev.get("epoch")).intValue())
            .setTopics(new ArrayList<>(topics.values()));
        Map<String, Object> r = response(ev, "OffsetCommit");
        Errors down = Boolean.TRUE.equals(ev.get("elsewhere")) ? Errors.NOT_COORDINATOR : unavailable();
        OffsetCommitResponseData resp;
        String by = "coordinator";
        if (down != null) {
            resp = mapped("commit-offset", request, runtimeException(down),
                (e, msg) -> OffsetCommitRequest.getErrorResponse(request, e));
            by = "runtime";
        } else {
            Ctx ctx = new Ctx(ApiKeys.OFFSET_COMMIT, str(ev, "client"), version);
            try {
                CoordinatorResult<OffsetCommitResponseData, CoordinatorRecord> res = shard.commitOffset(ctx, request);
                apply(res, false);
                resp = res.response();
            } catch (RuntimeException ex) {
                if (!(ex instanceof ApiException)) {
                    r.put("exception", ex.toString());
                    r.put("at", where(ex));
                    notes.add("OffsetCommit of " + request.memberId() + " threw " + ex);
                }
                // GroupCoordinatorService.commitOffsets: an operation's exception is every partition's error
                resp = mapped("commit-offset", request, ex, (e, msg) -> OffsetCommitRequest.getErrorResponse(request, e));
            }
        }
        List<Object> errors = new ArrayList<>();
        String error = Errors.NONE.name();
        for (OffsetCommitResponseData.OffsetCommitResponseTopic t : resp.topics()) {
            for (OffsetCommitResponseData.OffsetCommitResponsePartition p : t.partitions()) {
                Errors e = Errors.forCode(p.errorCode());
                errors.add(List.of(t.name(), p.partitionIndex(), e.name()));
                if (e != Errors.NONE && Errors.NONE.name().equals(error)) {
                    error = e.name();
                }
            }
        }
        r.put("error", error);
        r.put("errors", errors);
        r.put("by", by);
        send(r);
    }

    /** The committed offset of every partition of the image that has one (OffsetFetch as the admin client). */
    private Map<String, Object> committedOffsets() {
        Map<String, Object> out = new LinkedHashMap<>();
        List<OffsetFetchRequestData.OffsetFetchRequestTopics> topics = new ArrayList<>();
        for (String t : image.topicNames()) {
            List<Integer> parts = new ArrayList<>();
            for (int p = 0; p < image.topic(t).partitionCount(); p++) {
                parts.add(p);
            }
            topics.add(new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(t).setPartitionIndexes(parts));
        }
        OffsetFetchResponseData.OffsetFetchResponseGroup resp = shard.fetchOffsets(
            new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(GROUP).setTopics(topics), Long.MAX_VALUE);
        for (OffsetFetchResponseData.OffsetFetchResponseTopics t : resp.topics()) {
            for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                if (p.committedOffset() >= 0) {
                    out.put(t.name() + "-" + p.partitionIndex(), p.committedOffset());
                }
            }
        }
        return out;
    }

    /** The first frames of an exception's stack: where in Kafka's code (or the harness's) it was thrown. */
    static List<Object> where(Throwable ex) {
        List<Object> out = new ArrayList<>();
        for (StackTraceElement e : ex.getStackTrace()) {
            if (out.size() == 6) {
                break;
            }
            String cls = e.getClassName().replaceFirst("^org\\.apache\\.kafka\\.", "");
            out.add(cls + "." + e.getMethodName() + ":" + e.getLineNumber());
        }
        return out;
    }

    /** A full heartbeat's subscription: the event's {@code topics}, else every topic (as the model's members). */
    @SuppressWarnings("unchecked")
    private List<String> subscription(Map<String, Object> ev) {
        Object topics = ev.get("topics");
        if (topics == null) {
            return new ArrayList<>(image.topicNames());
        }
        List<String> out = new ArrayList<>();
        for (Object o : (List<Object>) topics) {
            out.add((String) o);
        }
        return out;
    }

    private ConsumerGroupHeartbeatResponseData cgError(ConsumerGroupHeartbeatRequestData request, Throwable ex) {
        return mapped("consumer-group-heartbeat", request, ex,
            (error, msg) -> new ConsumerGroupHeartbeatResponseData().setErrorCode(error.code()).setErrorMessage(msg));
    }

    private Map<String, Object> cgResponse(Map<String, Object> r, ConsumerGroupHeartbeatResponseData resp, String by) {
        r.put("error", Errors.forCode(resp.errorCode()).name());
        r.put("member", resp.memberId());
        r.put("epoch", resp.memberEpoch());
        List<Object> assignment = null;
        if (resp.assignment() != null) {
            Map<Uuid, Set<Integer>> parts = new HashMap<>();
            for (ConsumerGroupHeartbeatResponseData.TopicPartitions tp : resp.assignment().topicPartitions()) {
                parts.computeIfAbsent(tp.topicId(), k -> new TreeSet<>()).addAll(tp.partitions());
            }
            assignment = named(parts);
        }
        r.put("assignment", assignment);
        r.put("by", by);
        return r;
    }

    private ConsumerGroup consumerGroup() {
        if (groups == null) {
            return null;
        }
        try {
            Group g = groups.group(GROUP);
            return g instanceof ConsumerGroup ? (ConsumerGroup) g : null;
        } catch (RuntimeException ex) {
            return null;
        }
    }

    /** The consumer group as the coordinator holds it: epochs, members, target, partition epochs, timers. */
    private Map<String, Object> consumerState(Map<String, Object> s) {
        ConsumerGroup group = consumerGroup();
        if (group == null) {
            s.put("group", null);
            return s;
        }
        s.put("group", group.state().toString());
        s.put("group_epoch", group.groupEpoch());
        s.put("assignment_epoch", group.assignmentEpoch());
        List<String> ids = new ArrayList<>(group.members().keySet());
        ids.sort(null);
        List<Object> members = new ArrayList<>();
        for (String id : ids) {
            ConsumerGroupMember m = group.members().get(id);
            Map<String, Object> mm = new LinkedHashMap<>();
            mm.put("member", id);
            mm.put("epoch", m.memberEpoch());
            mm.put("prev", m.previousMemberEpoch());
            mm.put("instance", m.instanceId());
            mm.put("state", m.state().name());
            mm.put("assigned", named(keys(m.assignedPartitions())));
            mm.put("pending", named(keys(m.partitionsPendingRevocation())));
            mm.put("target", named(group.targetAssignment(id).partitions()));
            mm.put("assignment_epochs", assignmentEpochs(m));
            mm.put("session_timer", timer != null
                && timer.isScheduled(GroupMetadataManager.groupSessionTimeoutKey(GROUP, id)));
            mm.put("rebalance_timer", timer != null
                && timer.isScheduled(GroupMetadataManager.groupRebalanceTimeoutKey(GROUP, id)));
            members.add(mm);
        }
        s.put("members", members);
        // the static-member map: group.instance.id -> member id (KIP-848 static membership)
        s.put("static_members", new TreeMap<>(group.staticMembers()));
        Map<String, Object> pepochs = new LinkedHashMap<>();
        for (String t : image.topicNames()) {
            TopicsImage.Topic topic = image.topic(t);
            for (int p = 0; p < topic.partitionCount(); p++) {
                int e = group.currentPartitionEpoch(topic.id(), p);
                if (e != -1) {
                    pepochs.put(t + "-" + p, e);
                }
            }
        }
        s.put("partition_epochs", pepochs);
        try {
            s.put("committed", committedOffsets());
        } catch (RuntimeException ex) {  // a coordinator that is not serving: not compared
            s.put("committed", null);
        }
        s.put("timers", timer == null ? List.of() : timer.keys());
        return s;
    }

    /** KIP-1251's assignment epochs of a member's assigned and pending partitions: "topic-p" -> epoch. */
    private Map<String, Object> assignmentEpochs(ConsumerGroupMember m) {
        Map<String, Object> out = new TreeMap<>();
        for (Map<Uuid, Map<Integer, Integer>> parts : List.of(m.assignedPartitions(), m.partitionsPendingRevocation())) {
            for (Map.Entry<Uuid, Map<Integer, Integer>> e : parts.entrySet()) {
                String name = image.topic(e.getKey()).name();
                for (Map.Entry<Integer, Integer> p : e.getValue().entrySet()) {
                    out.put(name + "-" + p.getKey(), p.getValue());
                }
            }
        }
        return out;
    }

    private static Map<Uuid, Set<Integer>> keys(Map<Uuid, Map<Integer, Integer>> parts) {
        Map<Uuid, Set<Integer>> out = new HashMap<>();
        for (Map.Entry<Uuid, Map<Integer, Integer>> e : parts.entrySet()) {
            out.put(e.getKey(), new TreeSet<>(e.getValue().keySet()));
        }
        return out;
    }

    /** Partitions by topic id as sorted [topic name, partition] pairs. */
    private List<Object> named(Map<Uuid, Set<Integer>> parts) {
        List<TopicPartition> tps = new ArrayList<>();
        for (Map.Entry<Uuid, Set<Integer>> e : parts.entrySet()) {
            String name = image.topic(e.getKey()).name();
            for (int p : e.getValue()) {
                tps.add(new TopicPartition(name, p));
            }
        }
        tps.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        List<Object> out = new ArrayList<>();
        for (TopicPartition tp : tps) {
            out.add(List.of(tp.topic(), tp.partition()));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private Map<Uuid, Set<Integer>> byTopic(List<Object> parts) {
        Map<Uuid, Set<Integer>> out = new HashMap<>();
        for (Object o : parts) {
            List<Object> tp = (List<Object>) o;
            out.computeIfAbsent(image.topic((String) tp.get(0)).id(), k -> new TreeSet<>())
                .add(((Number) tp.get(1)).intValue());
        }
        return out;
    }

    private Map<Uuid, Map<Integer, Integer>> epochs(List<Object> parts, int epoch, Map<String, Object> since) {
        Map<Uuid, Map<Integer, Integer>> out = new HashMap<>();
        for (Map.Entry<Uuid, Set<Integer>> e : byTopic(parts).entrySet()) {
            Map<Integer, Integer> ps = new TreeMap<>();
            String name = image.topic(e.getKey()).name();
            for (int p : e.getValue()) {
                Object s = since.get(name + "-" + p);
                ps.put(p, s == null ? epoch : ((Number) s).intValue());
            }
            out.put(e.getKey(), ps);
        }
        return out;
    }

    private List<ConsumerGroupHeartbeatRequestData.TopicPartitions> requestPartitions(List<Object> parts) {
        List<ConsumerGroupHeartbeatRequestData.TopicPartitions> out = new ArrayList<>();
        Map<Uuid, Set<Integer>> grouped = byTopic(parts);
        for (String t : image.topicNames()) {
            Uuid id = image.topic(t).id();
            if (grouped.containsKey(id)) {
                out.add(new ConsumerGroupHeartbeatRequestData.TopicPartitions()
                    .setTopicId(id)
                    .setPartitions(new ArrayList<>(grouped.get(id))));
            }
        }
        return out;
    }

    // ---------------------------------------------------------------------------------- (de)serializing

    @SuppressWarnings("unchecked")
    private static JoinGroupRequestProtocolCollection protocols(String name, Map<String, Object> sub) {
        List<String> topics = new ArrayList<>();
        for (Object t : (List<Object>) sub.get("topics")) {
            topics.add((String) t);
        }
        List<TopicPartition> owned = new ArrayList<>();
        for (Object o : (List<Object>) sub.getOrDefault("owned", List.of())) {
            List<Object> tp = (List<Object>) o;
            owned.add(new TopicPartition((String) tp.get(0), ((Number) tp.get(1)).intValue()));
        }
        int generation = ((Number) sub.getOrDefault("generation", -1L)).intValue();
        Subscription subscription = new Subscription(topics, null, owned, generation, Optional.empty());
        JoinGroupRequestProtocolCollection protocols = new JoinGroupRequestProtocolCollection();
        protocols.add(new JoinGroupRequestProtocol()
            .setName(name)
            .setMetadata(bytes(ConsumerProtocol.serializeSubscription(subscription))));
        return protocols;
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.get(out);
        return out;
    }

    @SuppressWarnings("unchecked")
    private static byte[] assignmentBytes(List<Object> parts) {
        List<TopicPartition> tps = new ArrayList<>();
        for (Object o : parts) {
            List<Object> tp = (List<Object>) o;
            tps.add(new TopicPartition((String) tp.get(0), ((Number) tp.get(1)).intValue()));
        }
        return bytes(ConsumerProtocol.serializeAssignment(new Assignment(tps)));
    }

    private static List<Object> partitions(byte[] assignment) {
        List<Object> out = new ArrayList<>();
        if (assignment == null || assignment.length == 0) {
            return out;
        }
        List<TopicPartition> tps = new ArrayList<>(
            ConsumerProtocol.deserializeAssignment(ByteBuffer.wrap(assignment)).partitions());
        tps.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        for (TopicPartition tp : tps) {
            out.add(List.of(tp.topic(), tp.partition()));
        }
        return out;
    }

    private static Map<String, Object> subscription(byte[] metadata) {
        Map<String, Object> out = new LinkedHashMap<>();
        Subscription sub = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(metadata));
        out.put("topics", new ArrayList<Object>(sub.topics()));
        List<Object> owned = new ArrayList<>();
        List<TopicPartition> tps = new ArrayList<>(sub.ownedPartitions());
        tps.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        for (TopicPartition tp : tps) {
            owned.add(List.of(tp.topic(), tp.partition()));
        }
        out.put("owned", owned);
        out.put("generation", sub.generationId().orElse(-1));
        return out;
    }

    private static Map<String, Object> joinResponse(Map<String, Object> r, JoinGroupResponseData resp, String by) {
        r.put("error", Errors.forCode(resp.errorCode()).name());
        r.put("member", resp.memberId());
        r.put("generation", resp.generationId());
        r.put("leader", resp.leader());
        r.put("protocol_type", resp.protocolType());
        r.put("protocol", resp.protocolName());
        r.put("skip_assignment", resp.skipAssignment());
        List<Object> members = new ArrayList<>();
        for (JoinGroupResponseData.JoinGroupResponseMember m : resp.members()) {
            Map<String, Object> mm = new LinkedHashMap<>();
            mm.put("member", m.memberId());
            mm.put("instance", m.groupInstanceId());
            mm.put("subscription", subscription(m.metadata()));
            members.add(mm);
        }
        r.put("members", members);
        r.put("by", by);
        return r;
    }

    private static Map<String, Object> syncResponse(Map<String, Object> r, SyncGroupResponseData resp, String by) {
        r.put("error", Errors.forCode(resp.errorCode()).name());
        r.put("protocol_type", resp.protocolType());
        r.put("protocol", resp.protocolName());
        r.put("assignment", partitions(resp.assignment()));
        r.put("by", by);
        return r;
    }

    private static String str(Map<String, Object> ev, String key) {
        Object v = ev.get(key);
        return v == null ? "" : v.toString();
    }

    // ---------------------------------------------------------------------------------------- test doubles

    /** A clock that moves only when the harness moves it. */
    static final class MockTime implements Time {
        private long ms;

        void setMs(long ms) {
            this.ms = ms;
        }

        @Override public long milliseconds() { return ms; }
        @Override public long nanoseconds() { return TimeUnit.MILLISECONDS.toNanos(ms); }
        @Override public void sleep(long sleepMs) { ms += sleepMs; }
        @Override public void waitObject(Object obj, java.util.function.Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException("the harness never waits");
        }
    }

    /** The executor runs background tasks for consumer-group regex subscriptions only: never needed. */
    static final class IdleExecutor implements CoordinatorExecutor<CoordinatorRecord> {
        @Override
        public <R> boolean schedule(String key, TaskRunnable<R> task, TaskOperation<CoordinatorRecord, R> operation) {
            return false;
        }

        @Override public boolean isScheduled(String key) { return false; }
        @Override public void cancel(String key) { }
    }

    /**
     * The coordinator's timer, with nothing running by itself: a timeout happens when the harness fires
     * the task of that key ({@link #take}), which is how each of the model's timeouts (one member's
     * session, the join phase) maps onto Kafka's timers without expiring anything else.
     */
    static final class MockTimer implements CoordinatorTimer<CoordinatorRecord> {
        static final class Task {
            final long deadlineMs;
            final TimeoutOperation<CoordinatorRecord> operation;

            Task(long deadlineMs, TimeoutOperation<CoordinatorRecord> operation) {
                this.deadlineMs = deadlineMs;
                this.operation = operation;
            }
        }

        private final MockTime time;
        private final Map<String, Task> tasks = new LinkedHashMap<>();

        MockTimer(MockTime time) {
            this.time = time;
        }

        static String heartbeatKey(String group, String member) {
            return "heartbeat-" + group + "-" + member;  // GroupMetadataManager#classicGroupHeartbeatKey
        }

        static String joinKey(String group) {
            return "join-" + group;  // GroupMetadataManager#classicGroupJoinKey
        }

        static String syncKey(String group) {
            return "sync-" + group;  // GroupMetadataManager#classicGroupSyncKey: the pending-sync timeout
        }

        Task take(String key) {
            return tasks.remove(key);
        }

        Collection<String> keys() {
            List<String> out = new ArrayList<>(tasks.keySet());
            out.sort(null);
            return out;
        }

        @Override
        public void schedule(String key, long delay, TimeUnit unit, boolean retry, TimeoutOperation<CoordinatorRecord> operation) {
            tasks.put(key, new Task(time.milliseconds() + unit.toMillis(delay), operation));
        }

        @Override
        public void schedule(String key, long delay, TimeUnit unit, boolean retry, long retryBackoff,
                             TimeoutOperation<CoordinatorRecord> operation) {
            schedule(key, delay, unit, retry, operation);
        }

        @Override
        public void scheduleIfAbsent(String key, long delay, TimeUnit unit, boolean retry,
                                     TimeoutOperation<CoordinatorRecord> operation) {
            if (!tasks.containsKey(key)) {
                schedule(key, delay, unit, retry, operation);
            }
        }

        @Override public void cancel(String key) { tasks.remove(key); }
        @Override public boolean isScheduled(String key) { return tasks.containsKey(key); }
    }
}
