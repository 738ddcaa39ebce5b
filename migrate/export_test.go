package migrate

// LargestFirst exposes the order in which workers take the inputs.
var LargestFirst = largestFirst
