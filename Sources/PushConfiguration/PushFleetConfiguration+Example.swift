extension PushFleetConfiguration {
    /// A complete, commented example configuration documenting every key, its default and its range;
    /// for the README and `--help`. It parses as-is (the tests check it).
    public static let exampleYAML = #"""
        kafka:
          bootstrap-servers: "127.0.0.1:9092"   # required, non-empty
          group-prefix: pushfleet               # default "pushfleet"; groups are <prefix>.expand, <prefix>.send, <prefix>.feedback
          assignment-strategy: cooperative-sticky  # default; or range, roundrobin, range,roundrobin (eager: every rebalance stops the group). All workers of a group must agree
          group-instance-id: null               # optional: static membership, this worker's stable id (e.g. its pod name); groups get <id>.<role>
          session-timeout-ms: 6000              # default 6000, 1000...3600000; with group-instance-id, above a restart's duration
          properties:                            # optional: any librdkafka property; values are strings (numbers/bools in YAML are converted to their string form)
            security.protocol: SASL_SSL
          topics:                                # the layout `pushfleet topics create` makes and `pushfleet topics check` expects
            partitions: {jobs: 12, deliveries: 48, feedback: 6, dead-letters: 6, online: 12}   # defaults; 1...10000 each
            replication-factor: null             # optional, 1...32; default the brokers' default.replication.factor
            min-insync-replicas: null            # optional, 1...32, at most replication-factor; default the brokers'
        redis:
          host: 127.0.0.1                        # default 127.0.0.1
          port: 6379                             # default 6379, 1...65535
          username: null                         # optional (ACL user)
          password: null                         # optional; or password-file: path (not both); never printed
          database: 0                            # default 0, ≥ 0
          pool-size: 4                           # default 4, ≥ 1 (per node of a cluster)
          cluster-nodes: []                      # a Redis Cluster: some of its nodes ["10.0.0.1:6379", …] (host and port are then not used; database must be 0)
          replica-acknowledgements: 1            # cluster: replicas that confirm a master's writes (WAIT) so they survive a failover; 0 = never wait
          replica-ack-timeout-ms: 500            # ≥ 1
        apns:
          endpoint: {host: 127.0.0.1, port: 2197}   # optional: overrides Apple's hosts (the simulator)
          endpoints: {}                          # optional, per environment before `endpoint`: {sandbox: {host, port}, production: {host, port}}
          ca-file: /path/ca.pem                  # optional: trust roots instead of the system's
          port: 443                              # Apple's port, 443 or 2197; default 443
          connections-per-pool: 128              # default 128, ≥ 1: the most a pool opens; it sizes itself to the demand and the distance
          min-connections-per-pool: 1            # default 1, ≥ 1: kept open when idle (equal to connections-per-pool: a fixed pool)
          streams-per-connection: 1000           # default 1000, 1...1000 (the server may allow fewer; Apple's 65,535-byte window holds fewer: ~250 of 256 bytes)
          request-timeout-ms: 10000              # default 10000, ≥ 1
          credential-suspension-seconds: 60      # default 60, ≥ 1: an app whose credential APNs refused stops sending to that environment fleet-wide this long, then tries it again
          # event-loops: 1                       # optional, ≥ 1: threads for a worker's APNs connections; default half the cores
          binary-endpoints: {}                   # optional, apps with transport: binary: {sandbox: {host, port}, …}; default Apple's gateway(.sandbox).push.apple.com:2195
          feedback-endpoints: {}                 # optional: the legacy feedback service; default Apple's feedback(.sandbox).push.apple.com:2196
          binary-quiet-period-ms: 500            # default 500, ≥ 1: a binary frame no error response named within this counts as taken
          feedback-interval-seconds: 3600        # default 3600, ≥ 1: how often feedback workers read the feedback service of binary apps
        registry:
          shards: 16                             # default 16, 1...2048: a new app's shard count, stored with its first device (grow it with pushfleet registry reshard)
          probe-other-environment: true          # default true: a BadDeviceToken token is tried once (silent background push) in the app's other environment and moved there if APNs accepts it
          location-precision-km: 1               # default 1, 0.01...100: a device's reported location is kept to cells this wide
          location-ttl-days: 7                   # default 7, 1...30: a reported location is forgotten this many days after the day (UTC) of its last report
        worker:
          chunk-size: 1000                       # default 1000, 1...1000 (tokens per delivery chunk)
          chunks-in-flight: 32                   # default 32, ≥ 1 (chunks sent at once)
          expansions-in-flight: 1                # default 1, ≥ 1 (jobs and shard tasks expanded at once; more on expand-only workers)
          notifications-in-flight: 32000         # default 32000, ≥ 1: a ceiling (in flight is the rate times ~0.3 s at 200 ms: 25,000 at 85,000/s)
          permit-block: 100                      # default 100, ≥ 1 (rate permits taken per Redis call)
          resend-poll-ms: 200                    # default 200, ≥ 1
          shutdown-deadline-seconds: 30          # default 30, ≥ 1: after SIGTERM, work still running is cancelled (left for the next owner; exit 75)
          settle-patience-ms: 30                 # default 30, ≥ 1: answers wait this long for the rest of their batch at APNs (longer: fewer Redis commands, more sent twice after a crash)
        resend:
          max-attempts: 5                        # ≥ 1
          base-delay-ms: 1000                    # ≥ 0
          max-delay-ms: 300000                   # ≥ base-delay-ms
          max-age-seconds: 3600                  # ≥ 1
          lease-ms: 30000                        # ≥ 1
        breaker:                                 # the campaign circuit breaker: judges a job's first answers before its registry changes apply
          watch-notifications: 2000              # default 2000, ≥ 1: a job is watched until this many notifications have a final outcome
          min-notifications: 200                 # default 200, 1...watch-notifications: outcomes needed before the share below is judged
          max-rejected-share: 0.1                # default 0.1, 0...1: more BadDeviceToken / DeviceTokenNotForTopic (and undocumented refusals) than this pauses the job
        jobs:                                    # what operators may do to published jobs
          recall-window-hours: 24                # default 24, 1...168: a campaign can be recalled or overwritten this long after its publication
        metrics:
          port: null                             # optional 0...65535: workers serve /healthz, /readyz and /metrics on it
        tracing:                                 # a campaign as one trace, exported over OTLP/HTTP (docs/operations.md)
          otlp-endpoint: null                    # optional http:// or https:// URL of an OTLP/HTTP traces receiver (e.g. http://collector:4318/v1/traces); none: no spans
          sample-rate: 1                         # default 1, 0...1: the share of campaigns traced (a producer's traceparent decides for its own)
        api:                                     # `pushfleet api`
          host: 0.0.0.0                          # default 0.0.0.0
          port: 8080                             # default 8080, 0...65535 (0: any free port)
          max-body-bytes: 2097152                # default 2 MiB, ≥ 1024
        gateway:                                 # `pushfleet gateway`: the online channel (docs/online.md)
          host: 0.0.0.0                          # default 0.0.0.0
          port: 8090                             # default 8090, 0...65535 (0: any free port)
          id: null                               # optional, 1–64 bytes of A-Z a-z 0-9 . _ -: this gateway's name in presence records; default its host name
          secret-file: null                      # the connect-token key (≥ 32 bytes), shared by the API and every gateway; none: no connect tokens, no gateway
          token-ttl-seconds: 600                 # default 600, 1...86400: how long a connect token opens a connection
          ping-interval-seconds: 25              # default 25, 1...300
          idle-timeout-seconds: 60               # default 60, ≥ 2 × ping-interval-seconds: a connection silent this long is closed
          max-frame-bytes: 16384                 # default 16384, 125...1048576: a larger frame closes the connection (1009)
          messages-per-second: 10                # default 10, ≥ 1: frames a connection may send per second on average
          message-burst: 20                      # default 20, ≥ 1: frames at once above that rate
          ack-timeout-ms: 5000                   # default 5000, 100...60000: an online send not acked by then goes through APNs
          deliveries-in-flight: 256              # default 256, 1...10000: push.online messages delivered at once, each waiting for its acks
          inbox-size: 100                        # default 100, 1...10000: online-only notifications kept per device until it connects
          inbox-ttl-seconds: 604800              # default 7 days, 60...2592000: how long an inbox keeps one of a job without an expiration (and at most)
        apps:                                    # required, at least one; a MAPPING keyed by app id (1–64 bytes of A-Z a-z 0-9 . _ -)
          news:
            bundle-id: com.example.news          # required; a job's headers.topic must be it (or an extra topic) with its push type's suffix
            extra-topics: []                     # default none: more bundle ids the app's jobs may address (extensions, variants)
            environments: [sandbox, production]  # default both; each must be sandbox or production; non-empty, no duplicates
            transport: http2                     # default http2; binary: APNs's legacy binary interface (client certificates only)
            auth:                                # required: exactly one of token / certificate / pkcs12
              token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: /keys/AuthKey.p8}   # team-id and key-id: 10 chars A-Z0-9
              # certificate: {certificate-file: cert.pem, key-file: key.pem}
              # pkcs12: {file: cert.p12, passphrase-file: pass.txt}    # passphrase-file optional
              # sandbox: {certificate: {certificate-file: dev.pem, key-file: dev-key.pem}}   # an environment's own credential wins for it
              # production: {pkcs12: {file: prod.p12}}                 # (then the shared method above is optional)
            rate-per-second: 0                   # default 0 = unlimited; ≥ 0 (fleet-wide)
            burst: null                          # optional ≥ 1; default max(1, rate-per-second)
            sleep-after: 0                       # default 0 = never; ≥ 0: a worker pauses after every N sends
            sleep-ms: 0                          # default 0, ≥ 0
            connections-per-pool: null           # optional ≥ 1, overrides apns.connections-per-pool
            api-keys: []                         # HTTP API keys as SHA-256 digests: ["sha256:<64 hex>", …] (`printf %s KEY | sha256sum`); "sha256:<64 hex> device" for a key shipped in the app (bind, tags, receipts only)
            api-keys-file: null                  # optional: a file of more digests, one per line in the same form (a mounted secret), read again every 2 s
            time-zone: UTC                       # default UTC; an IANA name (Europe/Paris): the hours of the app's hour-of-day statistics

        # Relative file paths (key-file, ca-file, password-file, …) are resolved against this file's directory.
        # Environment variables PUSHFLEET__<SECTION>__<KEY>… override or add a value before validation, e.g.
        #   PUSHFLEET__KAFKA__BOOTSTRAP_SERVERS=broker:9092   PUSHFLEET__REDIS__PASSWORD=secret
        #   PUSHFLEET__KAFKA__PROPERTIES__SASL_MECHANISM=PLAIN   PUSHFLEET__APPS__NEWS__RATE_PER_SECOND=500
        # (segments are case-insensitive, `_` stands for `-`, or `.` under kafka.properties; `null` removes a key).

        """#
}
