package session

// Migrations lets the tests build a store at an older schema version.
var Migrations = migrations
