// The web console: GET / serves the page and GET /console/<file> its CSS and scripts, from memory. The page
// itself talks only to the management API's routes, with the same bearer token as the CLI, so the assets carry
// no data and stay open even with --auth-reads (the page must load to ask for the token).
import { fileURLToPath } from 'node:url';
import { loadConsoleAssets } from './assets.js';
export const CONSOLE_ASSET_PREFIX = '/console/';
export function defaultConsoleAssetsDir() {
    return fileURLToPath(new URL('./static/', import.meta.url));
}
// The page loads only its own files and talks only to this origin; nothing may frame it.
const CONTENT_SECURITY_POLICY = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
].join('; ');
/** A Fastify plugin serving the web console (a static page over the management API) at `/`. */
export const consolePlugin = async (app, options) => {
    const assets = loadConsoleAssets(options.assetsDir ?? defaultConsoleAssetsDir());
    const send = (request, reply, asset) => {
        // Names are not fingerprinted, so every use revalidates; the ETag makes that a 304 without a body.
        reply
            .header('cache-control', 'no-cache')
            .header('etag', asset.etag)
            .header('x-content-type-options', 'nosniff')
            .header('content-security-policy', CONTENT_SECURITY_POLICY)
            .header('referrer-policy', 'no-referrer');
        if (request.headers['if-none-match'] === asset.etag)
            return reply.code(304).send();
        return reply.header('content-type', asset.contentType).send(asset.body);
    };
    app.get('/', async (request, reply) => send(request, reply, assets.index));
    app.get(`${CONSOLE_ASSET_PREFIX}:file`, async (request, reply) => {
        // A lookup by exact name in what was loaded: "../x", "%2f" and the like are simply not keys.
        const asset = assets.byName.get(request.params.file);
        if (asset === undefined) {
            return reply.code(404).send({ error: 'not_found', message: `no console asset ${request.params.file}` });
        }
        return send(request, reply, asset);
    });
};
//# sourceMappingURL=plugin.js.map