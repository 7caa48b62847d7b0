// swift-tools-version:6.1
import PackageDescription

/// One policy for every target: Swift 6 language mode, explicit existentials, and imports that
/// say what a file uses.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "PushFleet",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushfleet", targets: ["PushFleet"]),
        .executable(name: "kafka-probe", targets: ["KafkaProbe"]),
        .executable(name: "pushfleet-bench", targets: ["PushFleetBenchmarks"]),
        .executable(name: "pushfleet-hotpath", targets: ["PushFleetHotPaths"]),
        .executable(name: "apns-sim", targets: ["APNsSimulatorTool"]),
        .executable(name: "pushfleet-fuzz", targets: ["PushFleetFuzz"]),
        .executable(name: "pushfleet-device", targets: ["PushFleetDevice"]),
        // Libraries only where another package would use them: an APNs client for any Swift
        // server (APNsCore, APNs) and the simulator to test it against (APNsSimulator); the job
        // model and the publisher for a Swift producer (PushCore, PushJobs, with what
        // JobPublisher's initializer takes: Kafka's producer, and PushStore's job store and
        // idempotency keys over Redis). The rest (stages, API, configuration, test rigs) is
        // PushFleet's own.
        .library(name: "APNsCore", targets: ["APNsCore"]),
        // The device side of the online channel: PushFleetClient on Foundation alone (an app's
        // dependency), PushFleetClientNIO its transport on SwiftNIO for Linux.
        .library(name: "PushFleetClient", targets: ["PushFleetClient"]),
        .library(name: "PushFleetClientNIO", targets: ["PushFleetClientNIO"]),
        .library(name: "APNs", targets: ["APNs"]),
        .library(name: "APNsSimulator", targets: ["APNsSimulator"]),
        .library(name: "PushCore", targets: ["PushCore"]),
        .library(name: "PushJobs", targets: ["PushJobs"]),
        .library(name: "PushStore", targets: ["PushStore"]),
        .library(name: "Kafka", targets: ["Kafka"]),
        .library(name: "Redis", targets: ["Redis"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // The HTTP API. Default traits off: no swift-configuration, no full Foundation in the server.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Traces: the API (spans, W3C trace context) in the libraries; the OpenTelemetry SDK with
        // its OTLP/HTTP exporter in `pushfleet` only. Default traits off: no gRPC.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // The API's own client (the demo, the tests); swift-otel's OTLP/HTTP exporter builds it anyway.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // C boundary: Debian's librdkafka-dev and libhiredis-dev.
        .systemLibrary(
            name: "CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // Linux's epoll and eventfd, for the Redis connections' event loop.
        .systemLibrary(name: "CEpoll"),

        .target(
            name: "Kafka",
            dependencies: [
                "CRdKafka",
                "FlowControl",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // librdkafka's mock cluster in process, for the demo, the tests and the benchmarks; the
        // product links it only for `pushfleet demo` (through EmbeddedStack).
        .target(
            name: "EmbeddedKafka",
            dependencies: [
                "CRdKafka",
                "Kafka",
                "Spawn",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Real redis-server processes (one, or a cluster) on free ports, for the demo, the tests
        // and the benchmarks.
        // Child processes over posix_spawn, for the rigs that start servers from a process
        // holding many descriptors (ChildProcess says why not Foundation's Process).
        .target(name: "Spawn", swiftSettings: swiftSettings),
        .target(
            name: "LocalRedis",
            dependencies: [
                "FlowControl",
                "Redis",
                "Spawn",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // How much work at once and when to try again: the async semaphore behind every bounded
        // window (Kafka's in-flight messages, notifications in flight) and the one backoff rule
        // of every retry and reconnect.
        .target(
            name: "FlowControl",
            dependencies: [.product(name: "DequeModule", package: "swift-collections")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Redis",
            dependencies: [
                "FlowControl",
                "CHiredis",
                "CEpoll",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Pure APNs vocabulary (push types, priorities, environments, tokens, reasons): no I/O.
        .target(
            name: "APNsCore",
            swiftSettings: swiftSettings
        ),
        // Frame-level helpers over NIO's HTTP/2 handler (the simulator), and the DATA body collector
        // the client's own codec shares; the frames of APNs's legacy binary interface, which the
        // client and the simulator both speak.
        .target(
            name: "HTTP2Frames",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP/2 client: provider tokens, connection pools, stream accounting, classification.
        .target(
            name: "APNs",
            dependencies: [
                "APNsCore",
                .product(name: "DequeModule", package: "swift-collections"),
                "FlowControl",
                "HTTP2Frames",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // An APNs stand-in speaking HTTP/2 over TLS, with validation, faults and counters.
        .target(
            name: "APNsSimulator",
            dependencies: [
                "FlowControl",
                "APNsCore",
                "HTTP2Frames",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "APNsSimulatorTool",
            dependencies: [
                "APNsSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "PushFleetClient", swiftSettings: swiftSettings),
        .target(
            name: "PushFleetClientNIO",
            dependencies: [
                "PushFleetClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "PushFleetDevice",
            dependencies: [
                "PushFleetClient",
                "PushFleetClientNIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PushCore",
            dependencies: ["APNsCore"],
            swiftSettings: swiftSettings
        ),
        // Redis-backed state of the pipeline: the device registry, jobs (statistics, sent
        // markers, control), the resend buffer, rate limits, the schedule, app suspensions.
        // PushCore stays free of I/O.
        .target(
            name: "PushStore",
            dependencies: ["FlowControl", "Redis", "APNsCore", "PushCore"],
            swiftSettings: swiftSettings
        ),
        // The log formats of the long-running processes (text, JSON lines).
        .target(
            name: "PushLogging",
            dependencies: [
                "PushCore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The configuration file (YAML) with environment overrides, validated at start.
        .target(
            name: "PushConfiguration",
            dependencies: [
                "APNsCore",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        // What producers, the API, the CLI and workers share: publishing jobs, their reports and
        // operations (pause, resume, abort, rate), the topics, clients from the configuration.
        .target(
            name: "PushJobs",
            dependencies: [
                "APNsCore",
                "Kafka",
                "PushConfiguration",
                "PushCore",
                "PushStore",
                "Redis",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // The stages: expand (push.jobs), send (push.deliveries, resend buffer), feedback.
        .target(
            name: "PushPipeline",
            dependencies: [
                "APNs",
                "FlowControl",
                "APNsCore",
                "Kafka",
                "PushConfiguration",
                "PushCore",
                "PushJobs",
                "PushStore",
                "Redis",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // `pushfleet gateway`: the online channel (WebSocket connections of open apps, connect
        // tokens, heartbeats, limits, presence). On NIOWebSocket directly, not Hummingbird's
        // WebSocket: a connection there holds about 4 times the memory (docs/online.md).
        .target(
            name: "PushGateway",
            dependencies: [
                "APNsCore",
                "FlowControl",
                "Kafka",
                "PushPipeline",
                "PushConfiguration",
                "PushCore",
                "PushJobs",
                "PushStore",
                "Redis",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `pushfleet api`: the HTTP API over the registry, push.jobs and job statistics.
        .target(
            name: "PushAPI",
            dependencies: [
                "PushGateway",
                "APNs",
                "APNsCore",
                "PushPipeline",
                "Kafka",
                "PushConfiguration",
                "PushCore",
                "PushJobs",
                "PushStore",
                "Redis",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            // The campaign console's files, compiled into the binary (`PackageResources`): a
            // deployed `pushfleet` serves them with nothing beside it.
            resources: [
                .embedInCode("Console/index.html"),
                .embedInCode("Console/console.css"),
                .embedInCode("Console/console.js"),
            ],
            swiftSettings: swiftSettings
        ),
        // The whole stack on one machine (embedded Kafka, redis-server, the simulator, a
        // configuration file) for the demo, the end-to-end tests and the benchmarks.
        .target(
            name: "EmbeddedStack",
            dependencies: [
                "APNsSimulator",
                "EmbeddedKafka",
                "Kafka",
                "LocalRedis",
                "PushConfiguration",
                "PushCore",
                "PushJobs",
                "Redis",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "PushFleet",
            dependencies: [
                "Kafka",
                "Redis",
                "PushCore",
                "PushConfiguration",
                "PushJobs",
                "PushPipeline",
                "PushStore",
                "EmbeddedStack",
                "APNsSimulator",
                "APNsCore",
                "PushAPI",
                "PushGateway",
                "PushLogging",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // A group-consumer process for the multi-process Kafka tests and the Kafka benchmark.
        .executableTarget(
            name: "KafkaProbe",
            dependencies: [
                "Kafka",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "PushFleetBenchmarks",
            dependencies: [
                "FlowControl",
                "Spawn",
                "EmbeddedKafka",
                "Kafka",
                "LocalRedis",
                "Redis",
                "APNs",
                "APNsSimulator",
                "EmbeddedStack",
                "PushConfiguration",
                "PushCore",
                "PushGateway",
                "PushJobs",
                "PushStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "benchmarks/Sources/PushFleetBenchmarks",
            swiftSettings: swiftSettings
        ),
        // Fixed workloads of the hot paths for valgrind (benchmarks/hotpaths.sh). A synchronous
        // main: valgrind 3.19 stops at the thread an async main's dispatchMain starts.
        .executableTarget(
            name: "PushFleetHotPaths",
            dependencies: [
                "APNs",
                "APNsCore",
                "PushCore",
                "PushPipeline",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "benchmarks/Sources/PushFleetHotPaths",
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "APNsTests",
            dependencies: [
                "HTTP2Frames",
                "APNs",
                "APNsCore",
                "APNsSimulator",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "APNsSimulatorTests",
            dependencies: [
                "APNsCore",
                "APNsSimulator",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BenchmarkTests",
            dependencies: ["PushFleetBenchmarks", "Redis", "PushCore", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "SpawnTests", dependencies: ["Spawn"], swiftSettings: swiftSettings),
        .testTarget(name: "PushFleetClientTests", dependencies: ["PushFleetClient"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushGatewayTests", dependencies: ["APNsCore", "PushCore", "PushGateway", "PushStore", "Redis", "LocalRedis"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KafkaTests",
            dependencies: ["Kafka", "EmbeddedKafka", "PipelineTestSupport", "Spawn", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushJobsTests",
            dependencies: ["Kafka", "PushJobs", "PushConfiguration", "PushStore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LocalRedisTests",
            dependencies: [
                "LocalRedis",
                "Redis",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EmbeddedStackTests",
            dependencies: [
                "EmbeddedKafka",
                "EmbeddedStack",
                "APNsSimulator",
                "PushConfiguration",
                "PushJobs",
                "Redis",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "APNsCoreTests",
            dependencies: ["APNsCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTP2FramesTests",
            dependencies: [
                "HTTP2Frames",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EmbeddedKafkaTests",
            dependencies: [
                "EmbeddedKafka",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RedisTests",
            dependencies: ["Redis", "LocalRedis"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushStoreTests",
            dependencies: ["PushStore", "Redis", "LocalRedis", "APNsCore", "PushCore", "FlowControl"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushConfigurationTests",
            dependencies: ["PushConfiguration", "APNsCore"],
            swiftSettings: swiftSettings
        ),
        // What the end-to-end suites share: the embedded stack with a Redis client, a producer,
        // in-process workers and the API; worker and CLI processes; log capture.
        .target(
            name: "PipelineTestSupport",
            dependencies: [
                "Spawn",
                "APNs",
                "APNsCore",
                "APNsSimulator",
                "Kafka",
                "LocalRedis",
                "PushConfiguration",
                "PushCore",
                "PushJobs",
                "PushPipeline",
                "PushStore",
                "Redis",
                "EmbeddedKafka",
                "EmbeddedStack",
                "PushAPI",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/PipelineTestSupport",
            swiftSettings: swiftSettings
        ),
        // End to end: embedded Kafka, a real redis-server, the APNs simulator, worker processes.
        .testTarget(
            name: "PushPipelineTests",
            dependencies: [
                "PipelineTestSupport",
                "Spawn",
                "APNs",
                "APNsCore",
                "APNsSimulator",
                "Kafka",
                "LocalRedis",
                "PushConfiguration",
                "PushCore",
                "PushJobs",
                "PushPipeline",
                "PushStore",
                "Redis",
                "EmbeddedKafka",
                "EmbeddedStack",
                "PushAPI",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP API against the embedded stack, and schemas/openapi.yaml against its routes.
        .testTarget(
            name: "PushAPITests",
            dependencies: [
                "PipelineTestSupport",
                "APNs",
                "APNsCore",
                "APNsSimulator",
                "Kafka",
                "LocalRedis",
                "PushConfiguration",
                "PushCore",
                "PushJobs",
                "PushPipeline",
                "PushStore",
                "Redis",
                "EmbeddedKafka",
                "EmbeddedStack",
                "PushAPI",
                "PushGateway",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        // The pushfleet command line as operators run it: separate processes.
        .testTarget(
            name: "PushFleetTests",
            dependencies: [
                "PipelineTestSupport",
                "APNs",
                "APNsCore",
                "APNsSimulator",
                "Kafka",
                "LocalRedis",
                "PushConfiguration",
                "PushCore",
                "PushJobs",
                "PushPipeline",
                "PushStore",
                "Redis",
                "EmbeddedKafka",
                "EmbeddedStack",
                "PushAPI",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushCoreTests",
            dependencies: ["PushCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FlowControlTests",
            dependencies: ["FlowControl"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushLoggingTests",
            dependencies: [
                "PushLogging",
                "PushCore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The decoders' fuzz rules, as a libFuzzer harness (scripts/fuzz.sh) or a replayer of
        // saved inputs.
        .executableTarget(
            name: "PushFleetFuzz",
            dependencies: ["PushCore", "PushConfiguration"],
            swiftSettings: swiftSettings
        ),
        // Mutation fuzzing of every decoder of outside input; corpus in Tests/FuzzTests/corpus.
        .testTarget(
            name: "FuzzTests",
            dependencies: [
                "HTTP2Frames",
                "PushFleetFuzz",
                "APNs",
                "APNsCore",
                "PushConfiguration",
                "PushCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            exclude: ["corpus"],
            swiftSettings: swiftSettings
        ),
    ]
)
