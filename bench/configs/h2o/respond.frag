      "/respond":
        mruby.handler: |
          Proc.new do |env|
            [200, {"content-type" => "text/plain", "content-length" => "13"}, ["Hello, world!"]]
          end
