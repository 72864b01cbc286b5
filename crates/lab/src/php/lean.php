<?php
// webstand lab (a must-use plugin): the index page without WordPress 6's inline block-editor styles,
// duotone SVG filters and emoji script, none of which the seed's WordPress 2.7 page had (about 20 KiB
// of the page with the twentytwentyone theme): generated posts make up the page's ~20 KiB instead.
remove_action('wp_enqueue_scripts', 'wp_enqueue_global_styles');
remove_action('wp_body_open', 'wp_global_styles_render_svg_filters');
remove_action('wp_head', 'print_emoji_detection_script', 7);
remove_action('wp_print_styles', 'print_emoji_styles');
add_action('wp_enqueue_scripts', function () {
    foreach (['wp-block-library', 'wp-block-library-theme', 'classic-theme-styles'] as $style) {
        wp_dequeue_style($style);
    }
}, 100);
