/** The store's file names inside the state directory (see HostStore). */
export const STATE_FILE = 'state.json';
export const LAST_GOOD_FILE = 'state.last-good.json';
