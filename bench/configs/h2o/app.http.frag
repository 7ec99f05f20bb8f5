# the Via header h2o adds to proxied requests by default is turned off (a
# global-level setting), so that it sends the origin what nginx and scalwsd send
proxy.emit-via-header: OFF
