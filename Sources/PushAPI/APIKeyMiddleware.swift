import Foundation
import HTTPTypes
import Hummingbird
import PushConfiguration

/// Lets a request through to a route of an app's API only with one of that app's keys, of the
/// route's scope or wider, and hands the handler the app (``APIRequestContext/app``). Every route
/// under `/v1/` is registered behind one of these (``APIRouter``): a handler cannot forget it.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    /// The least scope of key the routes behind this middleware need.
    let scope: APIKeyScope
    let apps: [String: AppSettings]
    let keys: LiveAPIKeyring

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        do {
            context.app = try Self.authorize(
                app: context.parameters.get("app"), authorization: request.headers[.authorization], scope: scope, apps: apps,
                keyring: keys.keyring)
        } catch {
            return error.response
        }
        return try await next(request, context)
    }

    /// The app named by the path (`{app}`, still percent-encoded), when `authorization` proves the
    /// caller holds one of its keys of `scope` or wider: unknown app → 404; no `Authorization:
    /// Bearer …` → 401; another app's key → 403; a device key where more is needed → 403.
    static func authorize(
        app raw: String?, authorization: String?, scope: APIKeyScope, apps: [String: AppSettings], keyring: APIKeyring
    ) throws(APIError) -> AppSettings {
        guard let raw else {
            preconditionFailure("a route behind the API-key middleware without {app}")
        }
        let id = try APICall.decoded(raw, name: "app")
        guard let app = apps[id] else {
            throw APIError.notFound("no app '\(APIValidation.printable(id))' is configured", field: "app")
        }
        guard let authorization else {
            throw APIError(.unauthorized, "unauthorized", "an API key is required: Authorization: Bearer <key>", field: "Authorization")
                .withChallenge()
        }
        let prefix = "Bearer "
        guard authorization.count > prefix.count, authorization.prefix(prefix.count).lowercased() == prefix.lowercased() else {
            throw APIError(.unauthorized, "unauthorized", "the Authorization header must be 'Bearer <key>'", field: "Authorization")
                .withChallenge()
        }
        let key = String(authorization.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
        guard let held = keyring.scope(of: key, for: app.id) else {
            throw APIError(.forbidden, "forbidden", "the API key is not one of app \(app.id)'s keys", field: "Authorization")
        }
        guard held.allows(scope) else {
            throw APIError(
                .forbidden, "forbidden",
                "a \(held.rawValue) key may only bind and unbind devices, read and edit their tags and post receipts",
                field: "Authorization")
        }
        return app
    }
}
