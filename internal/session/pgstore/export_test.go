package pgstore

// Migrations lets the tests build a database at an older schema version.
var Migrations = migrations
