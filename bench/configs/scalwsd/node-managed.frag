        # node-managed: the application scalwsd runs (node-managed.http.frag)
        location /app/ {
            node_pass app;
        }
