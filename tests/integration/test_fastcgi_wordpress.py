"""WordPress (Debian's package) through scalwsd and PHP-FPM on a private
MariaDB (tests/integration/wordpress.py): the home page, the login page and
a post render with status 200; the post's pretty permalink works through
try_files $uri $uri/ /index.php?$args. Skipped, with the reason, only when
the packages are not installed."""
import pytest

import phpfpm
import swsharness as h
import wordpress


@pytest.fixture(scope="module")
def site(tmp_path_factory, sws_module):
    wordpress.require()
    phpfpm.require()
    base = tmp_path_factory.mktemp("wp")
    db = wordpress.MariaDB(base / "db").start()
    fpm = phpfpm.PhpFpm(base / "fpm", children=4)
    wp = None
    try:
        fpm.start()
        # The site's URL has the port scalwsd gets: start it first.
        wp = wordpress.WordPress(db, "")
        srv = sws_module(ports=2, servers=wordpress.server_block(fpm.sock, wp.name))
        wp.base = "http://127.0.0.1:%d" % srv.ports[1]
        wp.install()
        yield srv, wp
    finally:
        if wp:
            wp.remove()
        fpm.stop()
        db.stop()


def get(srv, wp, path):
    return h.curl(wp.base + path, timeout=30)


def test_home_page(site):
    srv, wp = site
    r = get(srv, wp, "/")
    assert r.status == 200, r.body[:1000]
    assert b"ScalWS test blog" in r.body and b"Hello world!" in r.body
    assert b"</html>" in r.body


def test_login_page(site):
    srv, wp = site
    r = get(srv, wp, "/wp-login.php")
    assert r.status == 200
    assert b'name="log"' in r.body and b'name="pwd"' in r.body


def test_post_by_permalink(site):
    srv, wp = site
    assert "/hello-world/" in wp.post
    path = wp.post[len(wp.base):]
    r = get(srv, wp, path)
    assert r.status == 200, (path, r.body[:500])
    assert b"Hello world!" in r.body and b"Welcome to WordPress" in r.body


def test_post_by_id_and_not_found(site):
    srv, wp = site
    r = get(srv, wp, "/?p=1")
    assert r.status in (200, 301)
    r = get(srv, wp, "/no/such/page/")
    assert r.status == 404 and b"</html>" in r.body


def test_login_post(site):
    """A form POST through PHP-FPM: a wrong password is refused by WordPress."""
    srv, wp = site
    r = h.curl(wp.base + "/wp-login.php", method="POST",
               body=b"log=admin&pwd=wrong&wp-submit=Log+In&testcookie=1",
               headers=["Content-Type: application/x-www-form-urlencoded",
                        "Cookie: wordpress_test_cookie=WP%20Cookie%20check"])
    assert r.status == 200 and b"login_error" in r.body


def test_static_asset(site):
    srv, wp = site
    r = get(srv, wp, "/wp-includes/js/jquery/jquery.min.js")
    assert r.status == 200 and b"jQuery" in r.body
