// The node scenario's application: Node.js's own http module, "Hello,
// world!" (13 bytes) on every request, one process, keep-alive kept as long
// as the front end keeps its connections (the servers under test decide).
"use strict";
const http = require("http");
const body = Buffer.from("Hello, world!");
const server = http.createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": body.length });
    res.end(body);
});
server.keepAliveTimeout = 0;        // no idle limit of its own
server.headersTimeout = 60000;
// SOCK: a unix socket instead of the TCP port (node-unix, node-external);
// a PORT that is a path: the socket scalwsd's node_app gives (node-managed)
if (process.env.SOCK) {
    server.listen(process.env.SOCK);
} else if (String(process.env.PORT).startsWith("/")) {
    server.listen(process.env.PORT);
} else {
    server.listen(Number(process.env.PORT), "127.0.0.1");
}
