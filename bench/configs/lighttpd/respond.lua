-- /respond for lighttpd (mod_magnet): the fixed 13-byte body of the other servers.
lighty.r.resp_header["Content-Type"] = "text/plain"
lighty.r.resp_body:set({ "Hello, world!" })
return 200
