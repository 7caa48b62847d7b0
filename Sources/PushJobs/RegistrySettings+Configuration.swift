public import PushConfiguration
package import PushStore

extension RegistrySettings {
    /// The registry configuration these settings describe: a new app's shard count and how
    /// reported locations are kept.
    package var registryConfiguration: DeviceRegistryConfiguration {
        DeviceRegistryConfiguration(
            defaultShardCount: shards, locationPrecisionKilometres: locationPrecisionKilometres, locationDays: locationDays)
    }
}
