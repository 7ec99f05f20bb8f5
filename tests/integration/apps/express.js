// An Express application for test_apps.py (express comes from npm, installed
// by the test's fixture; NODE_PATH names where).
'use strict';
const express = require('express');
const app = express();
app.use(express.json());
app.get('/', (req, res) => res.send('express ' + process.pid + ' ' + req.hostname));
app.get('/proto', (req, res) => res.json({ ip: req.ip, protocol: req.protocol,
                                          xff: req.get('x-forwarded-for') || null }));
app.post('/json', (req, res) => res.json({ got: req.body }));
app.listen(process.env.PORT, () => console.log('express listening'));
