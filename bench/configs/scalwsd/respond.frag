        location = /respond {
            default_type text/plain;
            return 200 "Hello, world!";
        }
