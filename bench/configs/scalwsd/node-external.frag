        # node-external: the same hello.js, started by the harness, reached
        # as an upstream group with node-managed's keep-alive
        location /app/ {
            node_pass app;
        }
