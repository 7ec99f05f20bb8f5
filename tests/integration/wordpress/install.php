<?php
// Installs WordPress (Debian's package) into the database of the config
// named by argv[1] (/etc/wordpress/config-NAME.php, written by
// tests/integration/wordpress.py): the site, its admin, the default post,
// a classic theme if there is one, and date-and-name permalinks. Prints
// the post's permalink as JSON.
$_SERVER['WORDPRESS_CONFIG'] = $argv[1];
$_SERVER['HTTP_HOST'] = '127.0.0.1';
$_SERVER['REQUEST_METHOD'] = 'GET';
define('WP_INSTALLING', true);
// No mail from the installer (the test machine has no MTA).
function wp_new_blog_notification() {}
require '/usr/share/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
$r = wp_install('ScalWS test blog', 'admin', 'admin@example.test', false, '',
                'admin-password-1');
if (is_wp_error($r)) {
    fwrite(STDERR, $r->get_error_message() . "\n");
    exit(1);
}
foreach (['twentytwentyone', 'twentytwentytwo', 'twentytwentythree'] as $t) {
    if (wp_get_theme($t)->exists()) {
        switch_theme($t);
        break;
    }
}
update_option('permalink_structure', '/%year%/%monthnum%/%postname%/');
echo json_encode(['post' => get_permalink(1), 'theme' => get_stylesheet()]), "\n";
