"""map: exact keys (ignoring case), hostnames wildcards, regexes with
captures, default, values with variables, volatile, include, '' keys,
laziness and the per-request cache, and configuration errors."""
import pytest

import rwutil
import swsharness as h

HTTP = r"""
    map $arg_k $exact {
        default      "dflt";
        apple        "fruit";
        Carrot       "vegetable";
        ''           "empty";
        \default     "the word default";
        ~^num(\d+)$  "number $1";
        ~*^UP(?<rest>.*)$ "up $rest";
        with_var     "uri is $uri";
    }
    map $arg_h $host_kind {
        hostnames;
        default          "other";
        example.com      "exact";
        *.example.com    "sub";
        .example.org     "org-and-subs";
        www.example.*    "www-any";
        ~^api\d+\.       "api";
    }
    map $arg_n $nodefault { one 1; }
    map $http_x_count $counted { default $request_id; }
    map $uri $vol_uri { volatile; default $uri; }
    map $uri $cached_uri { default $uri; }
    map $arg_v $cached { default $msec; }
    map $mapped_later $chain { ~(?<word>\w+) "chain-$word"; default "nochain"; }
    map $arg_c $mapped_later { default "$arg_c"; }
    map $arg_i $included { include @TMP@/map.inc; default "not-included"; }
    map $selfref $selfref2 { default "x"; }
    map $arg_z $selfref { default "$selfref2"; }
    map_hash_max_size 2048;
    map_hash_bucket_size 64;
"""

SERVER = r"""
        request_id on;
        location = /exact { return 200 "[$exact]"; }
        location = /host { return 200 "[$host_kind]"; }
        location = /nodefault { return 200 "[$nodefault]"; }
        location = /twice { return 200 "$cached|$cached"; }
        location = /vol1 { set $before "$cached_uri,$vol_uri"; rewrite ^ /vol2 last; }
        location = /vol2 { return 200 "$before|$cached_uri|$vol_uri"; }
        location = /chain { return 200 "$chain"; }
        location = /inc { return 200 "$included"; }
        location = /cycle { return 200 "[$selfref]"; }
        location = /unused { return 200 "fine"; }
        location = /setmap { set $from_map $exact; return 200 "set=$from_map"; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(http=HTTP, server=SERVER,
                      files={"map.inc": "a-key  from-include;\nb-key 'other include';\n"})


def get(srv, path):
    r = h.curl(srv.url(path))
    assert r.status == 200, r
    return r.body.decode()


def test_exact_keys_ignore_case(srv):
    assert get(srv, "/exact?k=apple") == "[fruit]"
    assert get(srv, "/exact?k=APPLE") == "[fruit]"
    assert get(srv, "/exact?k=carrot") == "[vegetable]"
    assert get(srv, "/exact?k=pear") == "[dflt]"


def test_empty_and_escaped_keys(srv):
    assert get(srv, "/exact?k=") == "[empty]"
    assert get(srv, "/exact") == "[empty]"
    assert get(srv, "/exact?k=default") == "[the word default]"


def test_regex_keys_and_captures(srv):
    assert get(srv, "/exact?k=num42") == "[number 42]"
    assert get(srv, "/exact?k=num4x") == "[dflt]"
    assert get(srv, "/exact?k=upWARDS") == "[up WARDS]"
    assert get(srv, "/exact?k=UpWards") == "[up Wards]"


def test_value_with_variables(srv):
    assert get(srv, "/exact?k=with_var") == "[uri is /exact]"


def test_hostnames(srv):
    assert get(srv, "/host?h=example.com") == "[exact]"
    assert get(srv, "/host?h=EXAMPLE.com.") == "[exact]"
    assert get(srv, "/host?h=a.example.com") == "[sub]"
    assert get(srv, "/host?h=b.a.example.com") == "[sub]"
    assert get(srv, "/host?h=example.org") == "[org-and-subs]"
    assert get(srv, "/host?h=x.example.org") == "[org-and-subs]"
    assert get(srv, "/host?h=www.example.net") == "[www-any]"
    assert get(srv, "/host?h=api7.internal") == "[api]"
    assert get(srv, "/host?h=elsewhere.net") == "[other]"
    assert get(srv, "/host?h=") == "[other]"


def test_no_default_is_empty(srv):
    assert get(srv, "/nodefault?n=one") == "[1]"
    assert get(srv, "/nodefault?n=two") == "[]"


def test_cached_per_request_unless_volatile(srv):
    # read before a rewrite: the cached one keeps the value it had (for
    # the whole request, as nginx), the volatile one follows the new $uri
    assert get(srv, "/vol1") == "/vol1,/vol1|/vol1|/vol2"
    a, b = get(srv, "/twice").split("|")
    assert a == b


def test_map_defined_after_use(srv):
    assert get(srv, "/chain?c=hello") == "chain-hello"
    assert get(srv, "/chain?c=") == "nochain"


def test_include(srv):
    assert get(srv, "/inc?i=a-key") == "from-include"
    assert get(srv, "/inc?i=b-key") == "other include"
    assert get(srv, "/inc?i=c") == "not-included"


def test_cycle_is_empty_and_logged(srv):
    # $selfref reads $selfref2, whose source reads $selfref again: that
    # inner read is empty (logged), and the request goes on
    assert get(srv, "/cycle") in ("[]", "[x]")
    assert "cycle while evaluating variable" in srv.error_log()


def test_set_from_map(srv):
    assert get(srv, "/setmap?k=apple") == "set=fruit"


def test_lazy_evaluation(sws):
    # a map that is never read never evaluates its source: a regex that
    # would fail on every request (PCRE2's match limit) is not run
    srv = sws(http=r'map $http_x $never { ~(a+)+$ "m"; }',
              server='location = /n { return 200 "ok"; }\n'
                     'location = /y { return 200 "[$never]"; }')
    hdr = ["X: " + "a" * 3000 + "!"]
    r = h.curl(srv.url("/n"), headers=hdr)
    assert r.status == 200 and r.body == b"ok"
    assert "match limit" not in srv.error_log()
    r = h.curl(srv.url("/y"), headers=hdr)
    assert r.status == 200 and r.body == b"[]"
    assert "match limit" in srv.error_log()


def test_many_maps(sws):
    # more module variables than any fixed table: 300 maps
    http = "\n".join('map $arg_a $m%d { default "v%d"; }' % (i, i) for i in range(300))
    srv = sws(http=http, server='location = /m { return 200 "$m0 $m150 $m299"; }')
    r = h.curl(srv.url("/m"))
    assert r.body == b"v0 v150 v299", r


def test_config_errors(tmp_path):
    def case(text, needle, marker=None):
        return (text, needle, marker or text.split("\n")[0])

    rwutil.assert_errors_at(tmp_path, [
        case("map $arg_a b { }", 'invalid variable name "b"', "map $arg_a b"),
        case("map $arg_a $b {\n default;\n}", "invalid number of the map parameters",
             " default;"),
        case("map $arg_a $b {\n default 1;\n default 2;\n}", "duplicate default", " default 2;"),
        case("map $arg_a $b {\n x 1;\n X 2;\n}", 'conflicting parameter "X"', " X 2;"),
        # one wildcard, as in nginx (the core's sws_hostnames)
        case("map $host $b {\n hostnames;\n .a.com 1;\n *.a.com 2;\n}",
             'conflicting parameter "*.a.com"', " *.a.com 2;"),
        case("map $arg_a $b {\n ~(x 1;\n}", "missing closing parenthesis", " ~(x 1;"),
        case("map $arg_a $b {\n x 1 2;\n}", "invalid number of the map parameters", " x 1 2;"),
        case("map $arg_a $b {\n x $nosuch;\n}", 'unknown variable "$nosuch"', " x $nosuch;"),
        case("map $arg_a $b {\n x { }\n}", 'unexpected "{"', " x { }"),
        case("map $arg_a $host { }", 'variable "$host" is the server', "map $arg_a $host"),
        case("map $arg_a $b { }\nmap $arg_c $b { }", 'duplicate variable "$b"', "map $arg_c $b"),
        case("map $arg_a $b;", 'has no opening "{"'),
        case("map_hash_max_size x;", "invalid value"),
    ])
