#!/usr/bin/perl
# tap_sample.t - real TAP from Perl's Test::More (see regen.sh): passes,
# a failure with diagnostics, skip, todo, a subtest, '#' in a name.
use strict;
use warnings;
use Test::More tests => 7;

ok(1, 'adds two numbers');
is(2 - 1, 2, 'subtracts');
SKIP: {
    skip 'no network here', 1;
    ok(1, 'fetches a page');
}
TODO: {
    local $TODO = 'not written yet';
    ok(0, 'parses dates');
}
subtest 'nested group' => sub {
    plan tests => 2;
    ok(1, 'inner one');
    ok(0, 'inner two');
};
ok(1, 'handles \# hashes');
is_deeply([1, 2], [1, 3], 'compares lists');
