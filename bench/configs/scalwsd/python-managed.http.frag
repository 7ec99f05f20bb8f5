    # python-managed: uvicorn run by scalwsd, one process; its interpreter
    # is a wrapper that runs python3 on the client's CPU (bench/backends.py,
    # ManagedUvicorn), as every other scenario's application; keepalive
    # as every application scenario's upstream block (the default 32 is
    # fewer than wrk's 64 connections: connections reopened all the time)
    python_app app {
        root @APPS_DIR@;
        asgi asgi_hello:app;
        server uvicorn;
        python @MANAGED_PYTHON@;
        run_dir @MANAGED_RUN_DIR@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
