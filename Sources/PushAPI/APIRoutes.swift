import HTTPTypes
import PushConfiguration

/// The API's route table: every route the server answers, in one list (the OpenAPI document,
/// `schemas/openapi.yaml`, is checked against it by a test).
public enum APIRoutes {
    static let all: [APIRoute] =
        HealthRoutes.routes + DeviceRoutes.routes + ActivityRoutes.routes + ChannelRoutes.routes + PushRoutes.routes + JobRoutes.routes
        + JobListRoutes.routes
        + DeadLetterRoutes.routes + StatsRoutes.routes + OnlineRoutes.routes

    /// Every route as (method, OpenAPI path, operation id, least key scope), e.g. ("PUT",
    /// "/v1/apps/{app}/devices/{token}", "bindDevice", "device").
    public static var table: [(method: String, path: String, operationID: String, scope: String)] {
        all.map { ($0.method.rawValue, $0.path, $0.operationID, $0.scope.rawValue) }
    }
}
