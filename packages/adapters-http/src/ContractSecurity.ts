/**
 * The bearer scheme as the HttpApi contract states it, so /openapi.json documents
 * `Authorization: Bearer <key>` on every `/v1` group. Contract only: requests are authenticated by
 * PlatformMiddleware, never by an implementation of this middleware (none is provided or needed,
 * since the HttpApi definition is not served by HttpApiBuilder).
 */
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"

export class BearerAuth extends HttpApiMiddleware.Service<BearerAuth>()("@spot/adapters-http/BearerAuth", {
  security: { bearer: HttpApiSecurity.bearer }
}) {}
