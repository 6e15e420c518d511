create table entry (order_id varchar(64) not null, amount int not null, run int not null);
