// Never opens its socket: for test_apps.py's start_timeout.
console.log('silent app: not listening');
setInterval(() => {}, 1000);
