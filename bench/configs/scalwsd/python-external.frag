        # python-external: the same uvicorn command, started by the harness,
        # reached as an upstream group with the python scenario's keep-alive
        location /app/ {
            python_pass app;
        }
