// A Node.js application on the plain http module, for test_apps.py: it
// listens on process.env.PORT (the unix socket scalwsd gives it).
//   /pid          its pid (routes go by the last segment: /x/pid too)                  /headers   the request's fields, as JSON
//   /echo (POST)  the body's length and a checksum
//   /stream       N chunks of text, 50 ms apart (?n=N)
//   /slow         answers after ?ms=N
//   /exit         exits with code 3 after answering
//   /conns        how many connections it has accepted
//   websocket     any path with Upgrade: websocket echoes text frames
'use strict';
const http = require('http');
const crypto = require('crypto');

const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    // by the last segment: /pid and /prefix/pid alike
    const name = '/' + url.pathname.split('/').pop();
    if (name === '/pid') {
        res.end(String(process.pid));
    } else if (name === '/headers') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(req.headers));
    } else if (name === '/echo') {
        const hash = crypto.createHash('sha256');
        let n = 0;
        req.on('data', (d) => { n += d.length; hash.update(d); });
        req.on('end', () => res.end(n + ' ' + hash.digest('hex')));
    } else if (name === '/stream') {
        const total = Number(url.searchParams.get('n') || 5);
        let i = 0;
        res.setHeader('Content-Type', 'text/plain');
        const tick = () => {
            res.write('chunk ' + i + ' ' + Date.now() + '\n');
            if (++i === total) {
                res.end();
            } else {
                setTimeout(tick, 50);
            }
        };
        tick();
    } else if (name === '/slow') {
        setTimeout(() => res.end('slow ' + process.pid), Number(url.searchParams.get('ms') || 100));
    } else if (name === '/conns') {
        res.end(String(conns));
    } else if (name === '/exit') {
        res.end('bye');
        setTimeout(() => process.exit(3), 10);
    } else {
        res.end('plain ' + process.pid + ' ' + req.method + ' ' + req.url);
    }
});

let conns = 0;
server.on('connection', () => { conns++; });

// WebSocket (RFC 6455), enough for an echo of short text frames.
server.on('upgrade', (req, socket) => {
    const key = req.headers['sec-websocket-key'];
    const accept = crypto.createHash('sha1')
        .update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n' +
                 'Connection: Upgrade\r\nSec-WebSocket-Accept: ' + accept + '\r\n\r\n');
    let buf = Buffer.alloc(0);
    socket.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        while (buf.length >= 6) {
            const op = buf[0] & 0x0f, len = buf[1] & 0x7f;
            if (len > 125 || buf.length < 6 + len) {
                break;
            }
            const mask = buf.subarray(2, 6);
            const data = Buffer.from(buf.subarray(6, 6 + len).map((b, i) => b ^ mask[i % 4]));
            buf = buf.subarray(6 + len);
            if (op === 8) {
                socket.end(Buffer.from([0x88, 0]));
                return;
            }
            socket.write(Buffer.concat([Buffer.from([0x81, data.length]), data]));
        }
    });
});

// IGNORE_TERM set: SIGTERM does nothing (stop_timeout's SIGKILL ends it).
if (process.env.IGNORE_TERM) {
    process.on('SIGTERM', () => console.log('plain app ignores SIGTERM'));
}

// LISTEN_DELAY_MS: a start that takes that long to open its socket.
console.log('plain app starting on ' + process.env.PORT);
setTimeout(() => server.listen(process.env.PORT), Number(process.env.LISTEN_DELAY_MS || 0));
