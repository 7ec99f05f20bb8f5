        # python-external: the same uvicorn command, started by the harness
        location /app/ {
            python_pass unix:@APP_SOCK@;
        }
