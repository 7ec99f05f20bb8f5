// The client side for test_apps.py: URL as argv[2]. One client stays on
// long polling (GET and POST requests); two connect the way browsers do
// (polling first, then the upgrade to a WebSocket). Each echo is
// acknowledged with the transport that carried it; a broadcast of one
// upgraded client reaches the polling one. Prints one JSON line.
'use strict';
const { io } = require('socket.io-client');
const url = process.argv[2];
const done = (out) => { console.log(JSON.stringify(out)); process.exit(0); };
setTimeout(() => done({ error: 'timeout' }), 8000);

const poll = io(url, { reconnection: false, transports: ['polling'] });
const a = io(url, { reconnection: false });
const out = { polled: null, upgraded: null, heard: null };
let connected = 0;
const ready = () => {
  if (++connected < 2) return;
  poll.emit('echo', 'first', (r) => {
    out.polled = r;
    const upgraded = () => {
      if (a.io.engine.transport.name !== 'websocket') return setTimeout(upgraded, 20);
      a.emit('echo', 'second', (r2) => {
        out.upgraded = r2;
        poll.on('heard', (m) => { out.heard = m; done(out); });
        a.emit('shout', 'to all');
      });
    };
    upgraded();
  });
};
for (const c of [poll, a]) {
  c.on('connect', ready);
  c.on('connect_error', (e) => done({ error: String(e) }));
}
