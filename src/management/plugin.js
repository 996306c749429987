import { sendError } from './errors.js';
import { formatSchemaErrors, registerManagementApi } from './server.js';
export const managementPlugin = async (app, options) => {
    // As on the node's own server: a mislabelled body is a 415, not a schema error.
    app.removeContentTypeParser('text/plain');
    app.setSchemaErrorFormatter(formatSchemaErrors);
    app.setErrorHandler((error, _request, reply) => sendError(reply, error));
    registerManagementApi(app, options);
};
//# sourceMappingURL=plugin.js.map