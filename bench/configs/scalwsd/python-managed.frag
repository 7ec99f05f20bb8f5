        # python-managed: the application scalwsd runs (python-managed.http.frag)
        location /app/ {
            python_pass app;
        }
