        # python-native: the app under the native bridge's runner (one worker)
        location /app/ {
            python_bridge_pass bridge;
        }
