import Hummingbird
import PushConfiguration

/// A request's context on its way through the API's router: Hummingbird's, and the app whose key
/// the request proved to hold, which ``APIKeyMiddleware`` hands to the route's handler.
struct APIRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The app `{app}` names, once ``APIKeyMiddleware`` accepted the request's key; `nil` on the
    /// routes that need no key (health, readiness, metrics).
    var app: AppSettings?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
