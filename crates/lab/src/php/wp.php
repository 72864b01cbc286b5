<?php
// webstand lab: WordPress set up without a browser, run with php-cli.
//   php wp.php SITE install             wp_install(), the lab's theme, plain permalinks
//   php wp.php SITE posts FIRST COUNT   generated posts FIRST .. FIRST+COUNT-1, published, fixed dates
//   php wp.php SITE per-page N          posts on the index page
//   php wp.php SITE render HOST         the index page as a visitor at http://HOST/ gets it
// Everything is deterministic: the same commands give the same page.
[$site, $command] = [$argv[1], $argv[2]];
$_SERVER['HTTP_HOST'] = $command === 'render' ? $argv[3] : '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';

if ($command === 'render') {
    define('WP_USE_THEMES', true);
    require $site . '/wp-blog-header.php';
    exit(0);
}
if ($command === 'install') {
    define('WP_INSTALLING', true);
    // No mail from a lab: the install's notification is replaced by nothing (it is pluggable).
    function wp_new_blog_notification() {}
}
require $site . '/wp-load.php';

function lab_words($seed, $count) {
    static $words = ['server', 'request', 'latency', 'socket', 'kernel', 'worker', 'thread',
        'event', 'buffer', 'cache', 'header', 'response', 'client', 'queue', 'process', 'memory',
        'benchmark', 'apache', 'fastcgi', 'compression', 'throughput', 'connection', 'loopback', 'page'];
    $out = [];
    for ($i = 0; $i < $count; $i++) {
        $out[] = $words[($seed * 31 + $i * 7) % count($words)];
    }
    return implode(' ', $out);
}

switch ($command) {
case 'install':
    require_once ABSPATH . 'wp-admin/includes/upgrade.php';
    $r = wp_install('webstand lab', 'admin', 'admin@example.invalid', false, '', 'webstand-lab-admin');
    if (is_wp_error($r)) { fwrite(STDERR, $r->get_error_message() . "\n"); exit(1); }
    foreach (get_posts(['post_type' => 'any', 'post_status' => 'any', 'numberposts' => -1]) as $p) {
        wp_delete_post($p->ID, true);
    }
    update_option('permalink_structure', '');
    switch_theme($argv[3]);
    if (get_option('template') !== $argv[3]) { fwrite(STDERR, "theme {$argv[3]} not active\n"); exit(1); }
    break;
case 'posts':
    [$first, $count] = [(int)$argv[3], (int)$argv[4]];
    for ($i = $first; $i < $first + $count; $i++) {
        $paragraphs = [];
        for ($p = 0; $p < 3; $p++) {
            $paragraphs[] = '<p>' . ucfirst(lab_words($i * 3 + $p, 40)) . '.</p>';
        }
        $id = wp_insert_post([
            'post_title' => "Generated post $i: " . lab_words($i, 4),
            'post_content' => implode("\n", $paragraphs),
            'post_status' => 'publish',
            'post_author' => 1,
            'post_date' => gmdate('Y-m-d H:i:s', 1230768000 + $i * 86400),
        ], true);
        if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message() . "\n"); exit(1); }
    }
    break;
case 'per-page':
    update_option('posts_per_page', (int)$argv[3]);
    break;
default:
    fwrite(STDERR, "unknown command $command\n");
    exit(2);
}
