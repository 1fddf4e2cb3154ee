/** The pgbus demo web application: REST endpoints that enqueue and inspect jobs. */
package io.pgbus.demo;
