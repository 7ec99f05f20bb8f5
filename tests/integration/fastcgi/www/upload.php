<?php
// Uploaded files: name, size and md5 of each.
$out = [];
foreach ($_FILES as $field => $f) {
    $out[$field] = ['name' => $f['name'], 'size' => $f['size'], 'error' => $f['error'],
                    'md5' => $f['error'] == 0 ? md5_file($f['tmp_name']) : null];
}
header('Content-Type: application/json');
echo json_encode(['files' => $out, 'post' => $_POST]);
