// A Socket.IO server for test_apps.py (socket.io from npm, installed by the
// test's fixture; NODE_PATH names where): an acknowledged echo that says
// which transport carried it, and a broadcast to the other clients.
'use strict';
const http = require('http');
const { Server } = require('socket.io');
const server = http.createServer((req, res) => res.end('socket.io app ' + process.pid));
const io = new Server(server);
io.on('connection', (socket) => {
  socket.on('echo', (msg, ack) => ack({ msg, transport: socket.conn.transport.name }));
  socket.on('shout', (msg) => socket.broadcast.emit('heard', msg));
});
server.listen(process.env.PORT, () => console.log('socket.io listening'));
