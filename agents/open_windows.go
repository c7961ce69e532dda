package agents

// openNoFollow: Windows has no such open flags; callers check the opened
// file against the path (sameAsPath).
const openNoFollow = 0
