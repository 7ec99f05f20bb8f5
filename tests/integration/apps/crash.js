// Dies at once: a crash loop for test_apps.py.
console.error('crash app: giving up');
process.exit(1);
