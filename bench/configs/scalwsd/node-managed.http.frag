    # node-managed: hello.js run by scalwsd, one process; its interpreter
    # is a wrapper that runs node on the client's CPU (bench/backends.py,
    # ManagedNode), as every other scenario's application; keepalive as
    # every application scenario's upstream block
    node_app app {
        root @APPS_DIR@;
        script hello.js;
        node @MANAGED_NODE@;
        run_dir @MANAGED_RUN_DIR@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
